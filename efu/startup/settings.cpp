#include "startup/settings.h"

#include <cstdint>

#include <spdlog/spdlog.h>

#include "efu/errors.h"

namespace efu {
namespace {

// Each reader takes its options in the order the checks ran when they were one function, so
// the first bad option named is the same.

void read_receiver(const OptionValues& v, HostSettings& s) {
  s.socket.bind_address = v.get_string("bind");
  s.socket.port = static_cast<int>(v.get_int("port", 0, 65535));
  s.socket.multicast_interface = v.get_string("multicast-interface");
  s.socket.rcvbuf_bytes = static_cast<std::size_t>(v.get_int("rcvbuf", 0, 2'000'000'000));
  s.receiver.batch_size = static_cast<unsigned>(v.get_int("batch-size", 1, 1024));
  s.receiver.batch_bytes = static_cast<std::uint32_t>(v.get_int("batch-bytes", 0, 1 << 30));
  s.receiver.coalesce_ns =
      static_cast<std::uint64_t>(v.get_int("receive-coalesce-us", 0, 100'000)) * 1000;
  s.receiver.full_ring = parse_full_ring(v.get_string("full-ring"));
  s.receiver.max_datagram = static_cast<std::uint32_t>(v.get_int("max-datagram", 1, 65535));
  s.ring_size = static_cast<std::size_t>(v.get_int("ring-size", 2, 1 << 20));
  s.receiver.gro = v.get_bool("gro");
  s.socket.gro = s.receiver.gro;
  s.receiver.drain_timeout_ns =
      static_cast<std::uint64_t>(v.get_float("drain-timeout", 0, 3600) * 1e9);
  s.receive_threads = static_cast<unsigned>(v.get_int("receive-threads", 1, 64));
}

void read_af_xdp(const OptionValues& v, HostSettings& s) {
  const std::string backend = v.get_string("receive-backend");
  if (backend != "socket" && backend != "af_xdp") {
    throw ConfigError("--receive-backend: '" + backend +
                      "' is not a backend; expected socket or af_xdp");
  }
  s.af_xdp = backend == "af_xdp";
  s.xdp.interface = v.get_string("interface");
  s.xdp.queue = static_cast<unsigned>(v.get_int("queue", 0, 255));
  s.xdp.attach = xdp::parse_attach_mode(v.get_string("xdp-mode"));
  s.xdp.bind = xdp::parse_bind_mode(v.get_string("xdp-bind-mode"));
  s.xdp.frames = static_cast<unsigned>(v.get_int("xdp-frames", 64, 1 << 20));
  s.xdp.port = s.socket.port;
  s.xdp.bind_address = s.socket.bind_address;
  s.xdp_receiver.batch_size = s.receiver.batch_size;
  s.xdp_receiver.max_datagram = s.receiver.max_datagram;
  s.xdp_receiver.verify_checksums = v.get_bool("verify-checksums");
  // The pool is an AF_XDP socket's UMEM: only with that backend.
  s.xdp_receiver.in_place = s.af_xdp && v.get_bool("xdp-in-place");
}

/// The thread count --cpu pins for one kind of thread (`pinned` cores): it wins over the count
/// option, which must agree with it when it was given.
unsigned pinned_count(const OptionValues& v, std::size_t pinned, unsigned count, const char* option,
                      const char* what) {
  if (pinned == 0) return count;
  if (v.is_set(option) && pinned != count) {
    throw ConfigError("--cpu: '" + v.get_string("cpu") + "' pins " + std::to_string(pinned) + " " +
                      what + " threads; expected " + std::to_string(count) + " as --" + option +
                      " says");
  }
  return static_cast<unsigned>(pinned);
}

void read_threads(const OptionValues& v, HostSettings& s) {
  s.cpu = parse_cpu_plan(v.get_string("cpu"));
  s.threads = static_cast<unsigned>(v.get_int("processing-threads", 1, 64));
  s.wait_policy = parse_wait_policy(v.get_string("wait-policy"));
  // spin is for cores given to efu alone, and keeps the receive path as it was: no pauses,
  // unless asked for.
  if (s.wait_policy == WaitPolicy::kSpin && !v.is_set("receive-coalesce-us")) {
    s.receiver.coalesce_ns = 0;
  }
  s.threads = pinned_count(v, s.cpu.proc.size(), s.threads, "processing-threads", "processing");
  s.receive_threads =
      pinned_count(v, s.cpu.rx.size(), s.receive_threads, "receive-threads", "receive");
  if (s.af_xdp && s.receive_threads != 1) {
    throw ConfigError("--receive-threads: " + std::to_string(s.receive_threads) +
                      " with --receive-backend af_xdp; expected 1 (one AF_XDP socket per --queue)");
  }
  if (s.af_xdp && s.receiver.gro) {
    throw ConfigError(
        "--gro: on with --receive-backend af_xdp; expected off (GRO is a socket "
        "option)");
  }
  s.socket.reuse_port = s.receive_threads > 1;
}

void read_run_control(const OptionValues& v, HostSettings& s) {
  s.stats_interval = std::chrono::milliseconds(
      static_cast<std::int64_t>(1000 * v.get_float("stats-interval", 0.01, 3600)));
  s.stats_json = v.get_string("stats-json");
  s.stop_after_s = v.get_float("stop-after", 0, 1e9);
  s.flush_timeout_s = v.get_float("flush-timeout", 0, 3600);

  const std::string level = v.get_string("log-level");
  const auto parsed = spdlog::level::from_str(level);
  if (parsed == spdlog::level::off && level != "off") {
    throw ConfigError("--log-level: '" + level +
                      "' is not a level; expected trace, debug, info, warn, error or off");
  }
  spdlog::set_level(parsed);
}

/// Returns the instrument name, which the operator interfaces' names start with.
std::string read_outputs(const OptionValues& v, const std::string& module_name, HostSettings& s) {
  OutputSettings& o = s.outputs;
  o.broker = v.get_string("broker");
  if (o.broker.empty()) throw ConfigError("--broker: empty; expected HOST:PORT or 'none'");
  const std::string instrument = v.get_string("instrument");
  if (instrument.empty()) throw ConfigError("--instrument: empty; expected a name");
  auto topic = [&](const char* name, const char* suffix) {
    const std::string& t = v.get_string(name);
    return t.empty() ? instrument + suffix : t;
  };
  o.events_topic = topic("events-topic", "_detector");
  o.status_topic = topic("status-topic", "_status");
  o.samples_topic = topic("samples-topic", "_samples");
  o.source_name = v.get_string("source-name").empty() ? module_name : v.get_string("source-name");
  o.service_id = "efu-" + module_name + "-" + std::to_string(s.socket.port);
  o.kafka_config_file = v.get_string("kafka-config");
  o.ev44_max_bytes = static_cast<std::size_t>(v.get_int("ev44-max-bytes", 1024, 100'000'000));
  o.ev44_max_latency = std::chrono::milliseconds(v.get_int("ev44-max-latency-ms", 1, 60'000));
  o.raw_sample_every = static_cast<std::uint32_t>(v.get_int("raw-sample-every", 0, 1'000'000'000));
  LiveHistogramSettings& h = o.histograms;
  h.topic = v.get_string("histograms");
  h.pulses = static_cast<std::uint32_t>(v.get_int("histogram-pulses", 1, 1'000'000));
  h.tof_bins = static_cast<std::uint32_t>(v.get_int("histogram-tof-bins", 1, 1'000'000));
  h.tof_max_ns = static_cast<std::uint32_t>(v.get_int("histogram-tof-max-ns", 1, 2'147'483'647));
  h.pixels = static_cast<std::uint32_t>(v.get_int("histogram-pixels", 1, kMaxLiveHistogramPixels));
  if (h.tof_max_ns < h.tof_bins) {
    throw ConfigError("--histogram-tof-max-ns: " + std::to_string(h.tof_max_ns) +
                      " is below --histogram-tof-bins " + std::to_string(h.tof_bins) +
                      "; expected at least one ns per bin");
  }
  if (!h.topic.empty() && o.broker == "none") {
    throw ConfigError("--histograms: '" + h.topic +
                      "' needs a Kafka broker; expected --broker HOST:PORT, not 'none'");
  }
  o.stats_interval_ms = static_cast<std::uint32_t>(s.stats_interval.count());
  o.threads = s.threads;
  return instrument;
}

OperatorSettings read_operators(const OptionValues& v, const std::string& module_name,
                                const std::string& instrument) {
  OperatorSettings ops = read_operator_settings(v, module_name, instrument);
  ops.command->port = static_cast<int>(v.get_int("command-port", 0, 65535));
  ops.command->idle_timeout = std::chrono::milliseconds(
      static_cast<std::int64_t>(1000 * v.get_float("command-idle-timeout", 0.1, 86400)));
  if (ops.command->port == 0) ops.command.reset();
  return ops;
}

}  // namespace

HostSettings read_settings(const OptionValues& values, const PluginDescriptor& plugin) {
  HostSettings s;
  read_receiver(values, s);
  read_af_xdp(values, s);
  read_threads(values, s);
  read_run_control(values, s);
  const std::string instrument = read_outputs(values, plugin.name, s);
  s.ops = read_operators(values, plugin.name, instrument);
  s.receiver.sender = plugin.uses_source;
  return s;
}

}  // namespace efu
