#include "ops/operator_interfaces.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "efu/errors.h"
#include "receive/socket_address.h"

namespace efu {
namespace {

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

// A Graphite path segment list: name characters separated by single dots.
void check_path(const std::string& text, const std::string& option) {
  bool ok = !text.empty() && text.front() != '.' && text.back() != '.' &&
            text.find("..") == std::string::npos;
  ok = ok &&
       std::all_of(text.begin(), text.end(), [](char c) { return c == '.' || is_name_char(c); });
  if (!ok) {
    throw ConfigError(option + ": '" + text +
                      "' is not a metric path; expected words of letters, digits, '_' or '-' "
                      "separated by single dots");
  }
}

}  // namespace

OperatorSettings read_operator_settings(const OptionValues& v, const std::string& module,
                                        const std::string& instrument) {
  OperatorSettings s;
  s.module = module;
  s.instrument = instrument;

  std::string prefix = v.get_string("stats-prefix");
  if (prefix.empty()) {
    prefix = "efu." + instrument;
    check_path(prefix, "--instrument (in the default --stats-prefix efu.<instrument>)");
  } else {
    if (prefix.back() == '.') prefix.pop_back();  // the reference accepts both forms
    check_path(prefix, "--stats-prefix");
  }
  const std::string& region = v.get_string("stats-region");
  if (!region.empty()) {
    if (!std::all_of(region.begin(), region.end(), is_name_char)) {
      throw ConfigError("--stats-region: '" + region +
                        "' is not a name; expected letters, digits, '_' or '-' (or empty)");
    }
    prefix += "." + region;
  }
  s.stat_prefix = prefix + ".";

  CommandPortConfig command;
  command.bind_address = v.get_string("command-bind");
  s.command = command;

  if (const std::string& g = v.get_string("graphite"); !g.empty()) {
    const HostPort hp = split_host_port(g, "--graphite", false);
    s.graphite = GraphiteConfig{hp.host, hp.port, s.stat_prefix};
  }
  if (const std::string& m = v.get_string("metrics"); !m.empty()) {
    split_host_port(m, "--metrics",
                    true);  // checked here, so the error comes before anything starts
    s.metrics = MetricsConfig{m, instrument, module, this_build().version};
  }
  return s;
}

OperatorInterfaces::OperatorInterfaces(const OperatorSettings& settings, CounterRegistry& counters,
                                       StatsPublisher& publisher)
    : counters_(counters),
      uptime_(counters.gauge("main.uptime")),
      started_(std::chrono::steady_clock::now()) {
  publisher.add_gauge_updater([this] {
    uptime_.set(static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::seconds>(
                                               std::chrono::steady_clock::now() - started_)
                                               .count()));
  });
  if (settings.command) {
    protocol_ = std::make_unique<CommandProtocol>(latest_, settings.stat_prefix, settings.module,
                                                  this_build());
    command_ = std::make_unique<CommandPort>(*settings.command, *protocol_, counters);
    publisher.add_sink(&latest_);
    spdlog::info("command port: listening on {} (names {}<counter>)", command_->address_text(),
                 settings.stat_prefix);
  }
  if (settings.graphite) {
    graphite_ = std::make_unique<GraphiteOutput>(*settings.graphite, counters);
    publisher.add_sink(graphite_.get());
    spdlog::info("graphite: sending every counter to {} as {}<counter>",
                 SocketAddress::format(settings.graphite->host, settings.graphite->port),
                 settings.stat_prefix);
  }
  if (settings.metrics) {
    metrics_ = std::make_unique<MetricsEndpoint>(*settings.metrics);
    publisher.add_sink(metrics_.get());
    const HostPort hp = split_host_port(settings.metrics->listen, "--metrics", true);
    spdlog::info("metrics: serving http://{}/metrics",
                 SocketAddress::format(hp.host, metrics_->bound_port()));
  }
}

// The exposer goes last, with the object: civetweb takes about half a second to stop, and the
// final report should not wait for it.
OperatorInterfaces::~OperatorInterfaces() { stop(); }

void OperatorInterfaces::start(std::function<void()> request_stop) {
  if (command_) {
    // Until the first interval is published, serve the counters as they are now.
    StatsSnapshot now{};
    for (CounterSample& c : counters_.sample()) {
      now.counters.push_back(RateSample{std::move(c.name), c.kind, c.value, 0});
    }
    latest_.seed(now);
    command_->start(std::move(request_stop));
  }
  if (graphite_) graphite_->start();
}

void OperatorInterfaces::stop() {
  if (command_) command_->stop();
  if (graphite_) graphite_->stop();
}

}  // namespace efu
