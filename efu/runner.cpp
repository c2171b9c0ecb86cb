#include "runner.h"

#include <pthread.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <deque>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "data_path.h"
#include "efu/errors.h"
#include "efu/outputs.h"
#include "host_options.h"
#include "operator_interfaces.h"
#include "plugin_loader.h"
#include "processor.h"
#include "receiver.h"
#include "service_notify.h"
#include "stats_publisher.h"
#include "threads.h"
#include "udp_socket.h"

#ifndef EFU_VERSION
#define EFU_VERSION "0.0.0"
#endif

namespace efu {
namespace {

// ---- validated settings --------------------------------------------------------------------

std::int64_t int_in_range(const OptionValues& v, const char* name, std::int64_t lo,
                          std::int64_t hi) {
  const std::int64_t x = v.get_int(name);
  if (x < lo || x > hi) {
    throw ConfigError(std::string("--") + name + ": " + std::to_string(x) +
                      " is out of range; expected " + std::to_string(lo) + ".." +
                      std::to_string(hi));
  }
  return x;
}

double float_in_range(const OptionValues& v, const char* name, double lo, double hi) {
  const double x = v.get_float(name);
  if (x < lo || x > hi) {
    throw ConfigError(std::string("--") + name + ": " + v.get_string(name) +
                      " is out of range; expected " + std::to_string(lo) + " to " +
                      std::to_string(hi));
  }
  return x;
}

struct HostSettings {
  UdpSocketConfig socket;
  ReceiverConfig receiver;
  unsigned threads = 1;
  std::size_t ring_size = 4096;
  CpuPlan cpu;
  std::chrono::milliseconds stats_interval{1000};
  std::string stats_json;
  double stop_after_s = 0;
  double flush_timeout_s = 5;
  OutputSettings outputs;
  OperatorSettings ops;
};

HostSettings read_settings(const OptionValues& v, const std::string& module_name) {
  HostSettings s;
  s.socket.bind_address = v.get_string("bind");
  s.socket.port = static_cast<int>(int_in_range(v, "port", 0, 65535));
  s.socket.multicast_interface = v.get_string("multicast-interface");
  s.socket.rcvbuf_bytes = static_cast<std::size_t>(int_in_range(v, "rcvbuf", 0, 2'000'000'000));
  s.receiver.batch_size = static_cast<unsigned>(int_in_range(v, "batch-size", 1, 1024));
  s.receiver.max_datagram = static_cast<std::uint32_t>(int_in_range(v, "max-datagram", 1, 65535));
  s.ring_size = static_cast<std::size_t>(int_in_range(v, "ring-size", 2, 1 << 20));
  s.cpu = parse_cpu_plan(v.get_string("cpu"));
  s.threads = static_cast<unsigned>(int_in_range(v, "processing-threads", 1, 64));
  if (!s.cpu.proc.empty()) {
    if (v.is_set("processing-threads") && s.cpu.proc.size() != s.threads) {
      throw ConfigError("--cpu: '" + v.get_string("cpu") + "' pins " +
                        std::to_string(s.cpu.proc.size()) + " processing threads; expected " +
                        std::to_string(s.threads) + " as --processing-threads says");
    }
    s.threads = static_cast<unsigned>(s.cpu.proc.size());
  }
  s.stats_interval = std::chrono::milliseconds(
      static_cast<std::int64_t>(1000 * float_in_range(v, "stats-interval", 0.01, 3600)));
  s.stats_json = v.get_string("stats-json");
  s.stop_after_s = float_in_range(v, "stop-after", 0, 1e9);
  s.flush_timeout_s = float_in_range(v, "flush-timeout", 0, 3600);

  const std::string level = v.get_string("log-level");
  const auto parsed = spdlog::level::from_str(level);
  if (parsed == spdlog::level::off && level != "off") {
    throw ConfigError("--log-level: '" + level +
                      "' is not a level; expected trace, debug, info, warn, error or off");
  }
  spdlog::set_level(parsed);

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
  o.ev44_max_bytes =
      static_cast<std::size_t>(int_in_range(v, "ev44-max-bytes", 1024, 100'000'000));
  o.ev44_max_latency = std::chrono::milliseconds(int_in_range(v, "ev44-max-latency-ms", 1, 60'000));
  o.raw_sample_every = static_cast<std::uint32_t>(int_in_range(v, "raw-sample-every", 0, 1'000'000'000));
  o.stats_interval_ms = static_cast<std::uint32_t>(s.stats_interval.count());
  o.threads = s.threads;

  s.ops = read_operator_settings(v, module_name, instrument);
  s.ops.command->port = static_cast<int>(int_in_range(v, "command-port", 0, 65535));
  s.ops.command->idle_timeout = std::chrono::milliseconds(
      static_cast<std::int64_t>(1000 * float_in_range(v, "command-idle-timeout", 0.1, 86400)));
  if (s.ops.command->port == 0) s.ops.command.reset();
  return s;
}

// ---- signals --------------------------------------------------------------------------------

/// The stop request: set by the signal thread, the command port's EXIT or the --stop-after
/// deadline.
class StopRequest {
 public:
  void request(std::string reason) {
    // Notify under the lock: the waiter may return and destroy this object as soon as it can
    // take the lock, and the (detached) signal thread must not touch the cv after that.
    std::lock_guard lock(mutex_);
    if (requested_) return;
    requested_ = true;
    reason_ = std::move(reason);
    cv_.notify_all();
  }
  /// Waits until a stop is requested or `deadline` passes (then requests one itself).
  std::string wait(std::chrono::steady_clock::time_point deadline) {
    std::unique_lock lock(mutex_);
    if (!cv_.wait_until(lock, deadline, [this] { return requested_; })) {
      requested_ = true;
      reason_ = "--stop-after reached";
    }
    return reason_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool requested_ = false;
  std::string reason_;
};

/// SIGINT/SIGTERM are blocked in every thread and taken here with sigwait(): the first one
/// requests a graceful stop, a second one exits at once.
void watch_signals(sigset_t set, StopRequest* stop) {
  set_thread_name("efu-signal");
  int count = 0;
  for (;;) {
    int sig = 0;
    if (sigwait(&set, &sig) != 0) continue;
    if (++count == 1) {
      stop->request(std::string("signal ") + (sig == SIGINT ? "SIGINT" : "SIGTERM"));
    } else {
      static const char msg[] = "efu: second signal, exiting at once without draining\n";
      (void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
      _exit(128 + sig);
    }
  }
}

// ---- threads --------------------------------------------------------------------------------

/// Starts a data thread that reports its kernel tid once it runs, so its CPU can be sampled.
struct DataThread {
  std::string name;
  std::thread thread;
  std::atomic<int> tid{0};
};

void prepare_thread(const std::string& name, std::optional<int> core, DataThread& self) {
  set_thread_name(name);
  if (core) {
    if (const std::string err = pin_thread(*core); !err.empty()) {
      spdlog::error("{}: cannot pin to core {}: {}", name, *core, err);
    }
  }
  self.tid.store(current_tid(), std::memory_order_release);
}

void wait_for_tid(const DataThread& t) {
  for (int i = 0; i < 5000 && t.tid.load(std::memory_order_acquire) == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void write_stats_json(const std::string& path, const CounterRegistry& counters) {
  nlohmann::json j = nlohmann::json::object();
  for (const CounterSample& c : counters.sample()) j[c.name] = c.value;
  std::ofstream out(path);
  out << j.dump(2) << '\n';
  if (!out) spdlog::error("--stats-json: cannot write '{}'", path);
}

void print_final(const CounterRegistry& counters, std::uint64_t undelivered) {
  std::printf("efu: final counters\n");
  for (const CounterSample& c : counters.sample()) {
    std::printf("  %-44s %llu\n", c.name.c_str(), static_cast<unsigned long long>(c.value));
  }
  const std::uint64_t lost = counters.value("receive.dropped.kernel") +
                             counters.value("receive.dropped.ring_full") +
                             counters.value("receive.truncated");
  std::printf(
      "efu: summary: packets received %llu, processed %llu, lost %llu; events %llu; "
      "undelivered kafka messages %llu\n",
      static_cast<unsigned long long>(counters.value("receive.packets")),
      static_cast<unsigned long long>(counters.value("process.packets")),
      static_cast<unsigned long long>(lost),
      static_cast<unsigned long long>(counters.value("ev44.events") +
                                      counters.value("events.discarded")),
      static_cast<unsigned long long>(undelivered));
  std::fflush(stdout);
}

void setup_logging() {
  auto logger = spdlog::stderr_color_mt("efu");
  logger->set_pattern("%Y-%m-%d %H:%M:%S.%e %^%l%$ %v");
  spdlog::set_default_logger(logger);
}

int list_modules() {
  const PluginListing listing = list_plugins();
  std::printf("plugin search path:\n");
  for (const std::string& d : plugin_search_path()) std::printf("  %s\n", d.c_str());
  std::printf("plugins:\n");
  if (listing.plugins.empty()) std::printf("  (none)\n");
  for (const LoadedPlugin& p : listing.plugins) {
    std::printf("  %-14s %-10s %s\n  %-14s %s\n", p.descriptor->name, p.descriptor->version,
                p.descriptor->summary ? p.descriptor->summary : "", "", p.path.c_str());
  }
  for (const std::string& f : listing.failures) std::printf("  not loadable: %s\n", f.c_str());
  return 0;
}

int run(int argc, const char* const* argv) {
  const CommandLine cl = scan_command_line(argc, argv);
  if (cl.version) {
    std::printf("efu %s (plugin ABI %u)\n", EFU_VERSION, kPluginAbiVersion);
    return 0;
  }
  if (cl.list_modules) return list_modules();
  if (cl.module.empty()) {
    if (cl.help) {
      std::fputs(help_text(nullptr).c_str(), stdout);
      return 0;
    }
    throw ConfigError("--module: missing; expected a plugin name or path (see efu --list-modules)");
  }
  const LoadedPlugin plugin = load_plugin(cl.module);
  const PluginDescriptor& desc = *plugin.descriptor;
  if (cl.help) {
    std::fputs(help_text(&desc).c_str(), stdout);
    return 0;
  }
  const OptionValues values = parse_options(argc, argv, &desc, cl.config_file);
  HostSettings settings = read_settings(values, desc.name);
  spdlog::info("efu {}: plugin {} {} from {}", EFU_VERSION, desc.name, desc.version, plugin.path);

  CounterRegistry counters;
  std::unique_ptr<Outputs> outputs = settings.outputs.broker == "none"
                                         ? make_null_outputs(settings.outputs, counters)
                                         : make_kafka_outputs(settings.outputs, counters);
  if (settings.outputs.broker == "none") {
    spdlog::info("kafka: --broker none, events are counted and discarded");
  }

  std::vector<std::unique_ptr<Pipeline>> pipelines;
  std::deque<PipelineContext> contexts;
  for (unsigned i = 0; i < settings.threads; ++i) {
    contexts.push_back(
        PipelineContext{values, counters, outputs->events(i), i, settings.threads});
    try {
      pipelines.emplace_back(desc.create(contexts.back()));
    } catch (const ConfigError&) {
      throw;
    } catch (const std::exception& e) {
      throw ConfigError(std::string("--module: plugin '") + desc.name +
                        "' failed to start: " + e.what());
    }
    if (!pipelines.back()) {
      throw ConfigError(std::string("--module: plugin '") + desc.name + "' created no pipeline");
    }
  }

  UdpSocket socket(settings.socket);
  const unsigned process_batch = settings.receiver.batch_size;
  std::vector<std::unique_ptr<Lane>> lanes;
  const std::size_t ring_capacity = std::bit_ceil(settings.ring_size);
  const std::size_t pool_slots =
      pool_slots_needed(settings.threads, ring_capacity, settings.receiver.batch_size, process_batch);
  PacketPool pool(pool_slots, settings.receiver.max_datagram);
  std::vector<Lane*> lane_ptrs;
  for (unsigned i = 0; i < settings.threads; ++i) {
    lanes.push_back(std::make_unique<Lane>(ring_capacity, pool_slots));
    lane_ptrs.push_back(lanes.back().get());
  }
  spdlog::info("data path: {} processing thread(s), ring {} packets each, pool {} slots of {} B",
               settings.threads, ring_capacity, pool_slots, pool.slot_size());
  Receiver receiver(socket.fd(), settings.receiver, pool, lane_ptrs, desc.route_key, counters);
  std::vector<std::unique_ptr<Processor>> processors;
  ProcessorConfig pconf;
  pconf.batch_size = process_batch;
  pconf.raw_sample_every = settings.outputs.raw_sample_every;
  for (unsigned i = 0; i < settings.threads; ++i) {
    processors.push_back(std::make_unique<Processor>(*lanes[i], pool, *pipelines[i],
                                                     outputs->events(i), outputs->raw(i), pconf,
                                                     counters));
  }

  StatsPublisher publisher(counters, settings.stats_interval);
  LogStatsSink log_sink;
  LossWarningSink loss_warnings;
  publisher.add_sink(&log_sink);
  publisher.add_sink(&loss_warnings);
  if (StatsSink* status = outputs->status(); status != nullptr) publisher.add_sink(status);
  Counter& ring_fill = counters.gauge("receive.ring.fill");
  Counter& rcvbuf = counters.gauge("receive.socket.rcvbuf_bytes");
  rcvbuf.set(socket.granted_rcvbuf());
  publisher.add_gauge_updater([&] {
    std::uint64_t fill = 0;
    for (const auto& lane : lanes) fill += lane->packets.size();
    ring_fill.set(fill);
  });
  publisher.set_poll([&] { outputs->poll(); });
  OperatorInterfaces ops(settings.ops, counters, publisher);
  counters.freeze();

  // Block the stop signals before any thread starts, so every thread inherits the mask and
  // only the signal thread ever takes them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  StopRequest stop_request;
  std::thread(watch_signals, signals, &stop_request).detach();

  std::atomic<bool> receiver_stop{false};
  std::atomic<bool> input_done{false};
  DataThread rx_thread;
  rx_thread.name = "efu-rx";
  rx_thread.thread = std::thread([&] {
    prepare_thread(rx_thread.name, settings.cpu.rx, rx_thread);
    receiver.run(receiver_stop);
  });
  std::deque<DataThread> proc_threads(settings.threads);
  for (unsigned i = 0; i < settings.threads; ++i) {
    DataThread& t = proc_threads[i];
    t.name = "efu-proc" + std::to_string(i);
    std::optional<int> core;
    if (i < settings.cpu.proc.size()) core = settings.cpu.proc[i];
    t.thread = std::thread([&, i, core] {
      prepare_thread(proc_threads[i].name, core, proc_threads[i]);
      processors[i]->run(input_done);
    });
  }
  wait_for_tid(rx_thread);
  publisher.cpu().add_thread(rx_thread.name, rx_thread.tid.load());
  for (const DataThread& t : proc_threads) {
    wait_for_tid(t);
    publisher.cpu().add_thread(t.name, t.tid.load());
  }
  publisher.start(-1);
  ops.start([&] { stop_request.request("command port EXIT"); });
  notify_service_manager("READY=1");
  spdlog::info("running{}", settings.stop_after_s > 0
                                ? fmt::format(" for {} s", settings.stop_after_s)
                                : std::string(" until SIGINT/SIGTERM"));

  const auto deadline =
      settings.stop_after_s > 0
          ? std::chrono::steady_clock::now() +
                std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                    std::chrono::duration<double>(settings.stop_after_s))
          : std::chrono::steady_clock::time_point::max();
  const std::string reason = stop_request.wait(deadline);
  spdlog::info("stopping ({}): draining rings", reason);
  notify_service_manager("STOPPING=1");

  // Order matters: no new packets, then every queued packet through its pipeline, then the
  // pipelines' pending events out, then Kafka deliveries, then the final report.
  receiver_stop.store(true, std::memory_order_relaxed);
  rx_thread.thread.join();
  input_done.store(true, std::memory_order_release);
  for (DataThread& t : proc_threads) t.thread.join();
  publisher.stop();
  const auto flush_timeout = std::chrono::milliseconds(
      static_cast<std::int64_t>(settings.flush_timeout_s * 1000));
  std::uint64_t undelivered = outputs->flush(flush_timeout);
  // One last status with the final counters (the publisher thread has ended: this thread is
  // now the only one touching the outputs).
  publisher.publish_now();
  undelivered = outputs->flush(std::chrono::milliseconds(std::min<std::int64_t>(
      1000, static_cast<std::int64_t>(settings.flush_timeout_s * 1000))));
  if (undelivered != 0) {
    spdlog::warn("kafka: {} message(s) not delivered within --flush-timeout {} s", undelivered,
                 settings.flush_timeout_s);
  }
  ops.stop();
  print_final(counters, undelivered);
  if (!settings.stats_json.empty()) write_stats_json(settings.stats_json, counters);
  spdlog::info("stopped");
  return 0;
}

}  // namespace

int run_efu(int argc, const char* const* argv) {
  static std::once_flag logging_once;
  std::call_once(logging_once, setup_logging);
  try {
    return run(argc, argv);
  } catch (const ConfigError& e) {
    std::fprintf(stderr, "efu: error: %s\n", e.what());
    return kExitConfigError;
  }
}

}  // namespace efu
