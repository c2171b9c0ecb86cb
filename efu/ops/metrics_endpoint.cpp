#include "ops/metrics_endpoint.h"

#include <prometheus/counter.h>
#include <prometheus/exposer.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>
#include <spdlog/spdlog.h>

#include "efu/errors.h"
#include "ops/service_thread.h"
#include "receive/socket_address.h"

namespace efu {
namespace {

// A scrape is a few kB; a client that does not send its request or read the reply is dropped
// after this long, so it can tie up an exposer thread only briefly (and never a data thread).
constexpr const char* kRequestTimeoutMs = "5000";

}  // namespace

PrometheusSeries prometheus_series(std::string_view counter_name, CounterKind kind) {
  PrometheusSeries s;
  s.name = "efu_";
  for (char c : counter_name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    s.name += ok ? c : '_';
  }
  for (const auto& [suffix, scale] : {std::pair{"_ns", 1e-9}, {"_us", 1e-6}, {"_ms", 1e-3}}) {
    if (s.name.ends_with(suffix)) {
      s.name.resize(s.name.size() - 3);
      s.name += "_seconds";
      s.scale = scale;
      break;
    }
  }
  if (kind == CounterKind::kCounter) s.name += "_total";
  return s;
}

MetricsEndpoint::MetricsEndpoint(const MetricsConfig& config)
    : registry_(std::make_shared<prometheus::Registry>()) {
  const HostPort where = split_host_port(config.listen, "--metrics", true);
  // civetweb's form: "127.0.0.1:9100", "[::1]:9100".
  const std::string listening = SocketAddress::format(where.host, where.port);
  try {
    StopSignalsBlocked blocked;  // civetweb starts its threads here
    exposer_ = std::make_unique<prometheus::Exposer>(std::vector<std::string>{
        "listening_ports", listening, "num_threads", "2", "request_timeout_ms", kRequestTimeoutMs});
  } catch (const std::exception& e) {
    throw ConfigError("--metrics: cannot listen on " + listening + " (" + e.what() +
                      "); expected a free TCP port on a local address");
  }
  const std::vector<int> ports = exposer_->GetListeningPorts();
  bound_port_ = ports.empty() ? where.port : ports.front();
  exposer_->RegisterCollectable(registry_);

  const prometheus::Labels labels{{"instrument", config.instrument}, {"module", config.module}};
  prometheus::BuildGauge()
      .Name("efu_build_info")
      .Help("efu's version; the value is always 1")
      .Labels(labels)
      .Register(*registry_)
      .Add({{"version", config.version}})
      .Set(1);
  thread_seconds_ = &prometheus::BuildCounter()
                         .Name("efu_thread_cpu_seconds_total")
                         .Help("CPU time of each efu thread by mode (user, system)")
                         .Labels(labels)
                         .Register(*registry_);
  thread_percent_ =
      &prometheus::BuildGauge()
           .Name("efu_thread_cpu_percent")
           .Help("CPU use of each efu thread over the last stats interval, % of a core")
           .Labels(labels)
           .Register(*registry_);
  host_softirq_ = &prometheus::BuildGauge()
                       .Name("efu_host_softirq_percent")
                       .Help("Share of all CPUs' time in softirq over the last stats interval")
                       .Labels(labels)
                       .Register(*registry_)
                       .Add({});
  host_system_ = &prometheus::BuildGauge()
                      .Name("efu_host_system_percent")
                      .Help("Share of all CPUs' time in system mode over the last stats interval")
                      .Labels(labels)
                      .Register(*registry_)
                      .Add({});
  for (const char* reserved :
       {"efu_build_info", "efu_thread_cpu_seconds_total", "efu_thread_cpu_percent",
        "efu_host_softirq_percent", "efu_host_system_percent"}) {
    taken_[reserved] = reserved;
  }
  labels_ = labels;
}

MetricsEndpoint::~MetricsEndpoint() = default;

MetricsEndpoint::Mirrored& MetricsEndpoint::mirror(const RateSample& sample) {
  if (auto it = mirrored_.find(sample.name); it != mirrored_.end()) return it->second;
  Mirrored& m = mirrored_[sample.name];
  const PrometheusSeries series = prometheus_series(sample.name, sample.kind);
  const std::string& name = series.name;
  m.scale = series.scale;
  if (auto [it, inserted] = taken_.emplace(name, sample.name); !inserted) {
    spdlog::error("metrics: counters '{}' and '{}' both map to {}; '{}' is not exported",
                  it->second, sample.name, name, sample.name);
    return m;
  }
  const std::string help =
      "efu counter " + sample.name + (series.scale != 1.0 ? ", in seconds" : "");
  if (sample.kind == CounterKind::kCounter) {
    m.counter = &prometheus::BuildCounter()
                     .Name(name)
                     .Help(help)
                     .Labels(labels_)
                     .Register(*registry_)
                     .Add({});
  } else {
    m.gauge = &prometheus::BuildGauge()
                   .Name(name)
                   .Help(help)
                   .Labels(labels_)
                   .Register(*registry_)
                   .Add({});
  }
  return m;
}

void MetricsEndpoint::publish(const StatsSnapshot& snapshot) {
  for (const RateSample& c : snapshot.counters) {
    Mirrored& m = mirror(c);
    if (m.counter != nullptr && c.value > m.last) {
      m.counter->Increment(static_cast<double>(c.value - m.last) * m.scale);
      m.last = c.value;
    } else if (m.gauge != nullptr) {
      m.gauge->Set(static_cast<double>(c.value) * m.scale);
    }
  }
  for (const ThreadCpu& t : snapshot.threads) {
    for (const auto& [mode, pct] : {std::pair{"user", t.user_pct}, {"system", t.system_pct}}) {
      const prometheus::Labels l{{"thread", t.name}, {"mode", mode}};
      thread_percent_->Add(l).Set(pct);
      // pct is the tick delta over the interval, so this adds exactly the CPU time used.
      thread_seconds_->Add(l).Increment(pct / 100.0 * snapshot.interval_s);
    }
  }
  host_softirq_->Set(snapshot.host_softirq_pct);
  host_system_->Set(snapshot.host_system_pct);
}

}  // namespace efu
