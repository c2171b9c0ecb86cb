#include "startup/runner.h"

#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <deque>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "receive/af_xdp/xdp_receiver.h"
#include "receive/af_xdp/xdp_socket.h"
#include "process/data_path.h"
#include "efu/errors.h"
#include "efu/outputs.h"
#include "startup/host_options.h"
#include "ops/loss.h"
#include "startup/memory_budget.h"
#include "ops/operator_interfaces.h"
#include "startup/plugin_loader.h"
#include "process/processor.h"
#include "receive/receiver.h"
#include "ops/service_notify.h"
#include "ops/stats_publisher.h"
#include "startup/threads.h"
#include "receive/udp_socket.h"
#include "process/wakeup.h"

#ifndef EFU_VERSION
#define EFU_VERSION "0.0.0"
#endif

namespace efu {
namespace {

// ---- validated settings --------------------------------------------------------------------

struct HostSettings {
  UdpSocketConfig socket;
  ReceiverConfig receiver;
  bool af_xdp = false;  // --receive-backend af_xdp
  xdp::XdpSocketConfig xdp;
  xdp::XdpReceiverConfig xdp_receiver;
  unsigned threads = 1;
  unsigned receive_threads = 1;
  WaitPolicy wait_policy = WaitPolicy::kAdaptive;
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
  s.socket.port = static_cast<int>(v.get_int("port", 0, 65535));
  s.socket.multicast_interface = v.get_string("multicast-interface");
  s.socket.rcvbuf_bytes = static_cast<std::size_t>(v.get_int("rcvbuf", 0, 2'000'000'000));
  s.receiver.batch_size = static_cast<unsigned>(v.get_int("batch-size", 1, 1024));
  s.receiver.batch_bytes = static_cast<std::uint32_t>(v.get_int("batch-bytes", 0, 1 << 30));
  s.receiver.coalesce_ns =
      static_cast<std::uint64_t>(v.get_int("receive-coalesce-us", 0, 100'000)) * 1000;
  s.receiver.max_datagram = static_cast<std::uint32_t>(v.get_int("max-datagram", 1, 65535));
  s.ring_size = static_cast<std::size_t>(v.get_int("ring-size", 2, 1 << 20));
  s.receiver.gro = v.get_bool("gro");
  s.socket.gro = s.receiver.gro;
  s.receiver.drain_timeout_ns =
      static_cast<std::uint64_t>(v.get_float("drain-timeout", 0, 3600) * 1e9);
  s.receive_threads = static_cast<unsigned>(v.get_int("receive-threads", 1, 64));
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
  s.cpu = parse_cpu_plan(v.get_string("cpu"));
  s.threads = static_cast<unsigned>(v.get_int("processing-threads", 1, 64));
  s.wait_policy = parse_wait_policy(v.get_string("wait-policy"));
  // spin is for cores given to efu alone, and keeps the receive path as it was: no pauses,
  // unless asked for.
  if (s.wait_policy == WaitPolicy::kSpin && !v.is_set("receive-coalesce-us")) {
    s.receiver.coalesce_ns = 0;
  }
  if (!s.cpu.proc.empty()) {
    if (v.is_set("processing-threads") && s.cpu.proc.size() != s.threads) {
      throw ConfigError("--cpu: '" + v.get_string("cpu") + "' pins " +
                        std::to_string(s.cpu.proc.size()) + " processing threads; expected " +
                        std::to_string(s.threads) + " as --processing-threads says");
    }
    s.threads = static_cast<unsigned>(s.cpu.proc.size());
  }
  if (!s.cpu.rx.empty()) {
    if (v.is_set("receive-threads") && s.cpu.rx.size() != s.receive_threads) {
      throw ConfigError("--cpu: '" + v.get_string("cpu") + "' pins " +
                        std::to_string(s.cpu.rx.size()) + " receive threads; expected " +
                        std::to_string(s.receive_threads) + " as --receive-threads says");
    }
    s.receive_threads = static_cast<unsigned>(s.cpu.rx.size());
  }
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
  o.stats_interval_ms = static_cast<std::uint32_t>(s.stats_interval.count());
  o.threads = s.threads;

  s.ops = read_operator_settings(v, module_name, instrument);
  s.ops.command->port = static_cast<int>(v.get_int("command-port", 0, 65535));
  s.ops.command->idle_timeout = std::chrono::milliseconds(
      static_cast<std::int64_t>(1000 * v.get_float("command-idle-timeout", 0.1, 86400)));
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
    // take the lock, and no requester may touch the cv after that.
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

/// SIGINT/SIGTERM are blocked in every thread and taken by this thread with sigwait(): the
/// first requests a graceful stop, a second exits at once. The thread is joined when this object
/// goes (it is woken with SIGUSR1, which is blocked too and otherwise ignored), so it never
/// outlives the StopRequest it refers to. Construct it before any other thread starts, so every
/// thread inherits the blocked mask.
class SignalWatcher {
 public:
  explicit SignalWatcher(StopRequest& stop) : stop_(stop) {
    sigemptyset(&set_);
    sigaddset(&set_, SIGINT);
    sigaddset(&set_, SIGTERM);
    sigaddset(&set_, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &set_, nullptr);
    thread_ = std::thread([this] { watch(); });
  }
  ~SignalWatcher() {
    done_.store(true, std::memory_order_release);
    pthread_kill(thread_.native_handle(), SIGUSR1);
    thread_.join();
  }
  SignalWatcher(const SignalWatcher&) = delete;
  SignalWatcher& operator=(const SignalWatcher&) = delete;

 private:
  void watch() {
    set_thread_name("efu-signal");
    int count = 0;
    for (;;) {
      int sig = 0;
      if (sigwait(&set_, &sig) != 0) continue;
      if (sig == SIGUSR1) {
        if (done_.load(std::memory_order_acquire)) return;
        continue;  // someone else's SIGUSR1: not a stop
      }
      if (++count == 1) {
        stop_.request(std::string("signal ") + (sig == SIGINT ? "SIGINT" : "SIGTERM"));
      } else {
        static const char msg[] = "efu: second signal, exiting at once without draining\n";
        (void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
        _exit(128 + sig);
      }
    }
  }

  StopRequest& stop_;
  sigset_t set_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

// ---- threads --------------------------------------------------------------------------------

/// A data thread that reports its kernel tid once it runs, so its CPU can be sampled.
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

/// The receive and processing threads. However run() ends (a stop, or an exception after the
/// threads started), stop() runs in the right order: the receive threads stop and drain their
/// sockets, then the processing threads drain their lanes and flush; then all are joined.
class DataThreads {
 public:
  ~DataThreads() { stop(); }

  void start_receiver(std::string name, std::optional<int> core, std::function<void()> body) {
    start(receivers_, std::move(name), core, std::move(body));
  }
  void start_processor(std::string name, std::optional<int> core, std::function<void()> body,
                       Wakeup* wakeup) {
    start(processors_, std::move(name), core, std::move(body));
    wakeups_.push_back(wakeup);
  }
  const std::atomic<bool>& receiver_stop() const noexcept { return receiver_stop_; }
  const std::atomic<bool>& input_done() const noexcept { return input_done_; }
  const std::deque<DataThread>& receivers() const noexcept { return receivers_; }
  const std::deque<DataThread>& processors() const noexcept { return processors_; }

  /// Idempotent.
  void stop() {
    receiver_stop_.store(true, std::memory_order_relaxed);
    for (DataThread& t : receivers_) {
      if (t.thread.joinable()) t.thread.join();
    }
    input_done_.store(true, std::memory_order_release);
    for (Wakeup* w : wakeups_) w->notify();
    for (DataThread& t : processors_) {
      if (t.thread.joinable()) t.thread.join();
    }
  }

 private:
  static void start(std::deque<DataThread>& group, std::string name, std::optional<int> core,
                    std::function<void()> body) {
    DataThread& t = group.emplace_back();
    t.name = std::move(name);
    t.thread = std::thread([&t, core, body = std::move(body)] {
      prepare_thread(t.name, core, t);
      body();
    });
  }

  std::atomic<bool> receiver_stop_{false};
  std::atomic<bool> input_done_{false};
  std::deque<DataThread> receivers_;  // deque: stable addresses for the threads' references
  std::deque<DataThread> processors_;
  std::vector<Wakeup*> wakeups_;
};

/// The af_xdp backend's socket. In place (--xdp-in-place on), its UMEM is the receive thread's
/// pool: the fill ring's frames plus every frame the lanes can hold, which is every slot of
/// pool_slots_needed() times the frames one datagram can span.
std::unique_ptr<xdp::XdpSocket> open_xdp_socket(const HostSettings& s, std::size_t pool_slots) {
  if (!s.xdp_receiver.in_place) return std::make_unique<xdp::XdpSocket>(s.xdp);
  xdp::XdpSocketConfig c = s.xdp;
  c.umem_frames = static_cast<unsigned>(
      c.frames + pool_slots * xdp::frames_per_datagram(s.receiver.max_datagram));
  c.prefill = false;  // the receiver fills the ring from its pool
  return std::make_unique<xdp::XdpSocket>(c);
}

/// Refuses a data path whose packet pools and rings do not fit in memory, in one line naming
/// the options that size it.
void check_memory(const HostSettings& s, std::size_t pool_slots, std::size_t slot_size,
                  std::size_t ring_capacity) {
  const double pools = static_cast<double>(s.receive_threads) * static_cast<double>(pool_slots) *
                       static_cast<double>(slot_size);
  const double rings = static_cast<double>(s.receive_threads) * s.threads *
                       (static_cast<double>(ring_capacity) * sizeof(PacketRef) +
                        static_cast<double>(pool_slots) * sizeof(std::uint32_t));
  const double need = pools + rings;
  const MemoryBudget budget = available_memory();
  // Leave a quarter of what is available for Kafka's queue, the plugins and the rest.
  if (budget.bytes != 0 && need > 0.75 * static_cast<double>(budget.bytes)) {
    throw ConfigError(fmt::format(
        "--ring-size {} x --processing-threads {} x --receive-threads {} needs {} of packet "
        "slots ({} B each{}) and rings, but {} of memory is available ({}); expected a smaller "
        "--ring-size, --processing-threads, --receive-threads or --max-datagram",
        s.ring_size, s.threads, s.receive_threads, format_bytes(static_cast<std::uint64_t>(need)),
        slot_size, s.receiver.gro ? ", --gro on" : "", format_bytes(budget.bytes), budget.source));
  }
}

void write_stats_json(const std::string& path, const CounterRegistry& counters) {
  nlohmann::json j = nlohmann::json::object();
  for (const CounterSample& c : counters.sample()) j[c.name] = c.value;
  std::ofstream out(path);
  out << j.dump(2) << '\n';
  if (!out) spdlog::error("--stats-json: cannot write '{}'", path);
}

/// Where the events and Kafka messages went, exactly: once flush() has purged what the broker
/// did not take, every event formed is delivered or counted undelivered
///   ev44.events = ev44.events.delivered + ev44.events.dropped + ev44.events.delivery.failed
/// (--broker none: all are events.discarded), and every message efu made is
/// kafka.delivery.ok + kafka.delivery.failed + kafka.produce.failed.*.
void print_delivery(const CounterRegistry& counters) {
  const auto v = [&](const char* name) {
    return static_cast<unsigned long long>(counters.value(name));
  };
  const unsigned long long events = v("ev44.events") + v("events.discarded");
  const unsigned long long not_queued =
      v("kafka.produce.failed.queue_full") + v("kafka.produce.failed.other");
  const unsigned long long messages = v("kafka.produce.messages") + not_queued;
  std::printf("efu: summary: events %llu, delivered %llu, undelivered %llu; kafka messages %llu, "
              "delivered %llu, undelivered %llu\n",
              events, v("ev44.events.delivered"), events - v("ev44.events.delivered"), messages,
              v("kafka.delivery.ok"), messages - v("kafka.delivery.ok"));
  if (events == v("ev44.events.delivered") && messages == v("kafka.delivery.ok")) return;
  std::printf("efu: undelivered: events %llu not queued (queue full or rejected), %llu in failed "
              "deliveries (%llu of them possibly written by the broker), %llu discarded "
              "(--broker none); messages %llu not queued, %llu failed (purged at stop %llu, timed "
              "out %llu, other reasons %llu)\n",
              v("ev44.events.dropped"), v("ev44.events.delivery.failed"),
              v("ev44.events.delivery.uncertain"), v("events.discarded"), not_queued,
              v("kafka.delivery.failed"), v("kafka.delivery.failed.purged"),
              v("kafka.delivery.failed.timed_out"),
              v("kafka.delivery.failed") - v("kafka.delivery.failed.purged") -
                  v("kafka.delivery.failed.timed_out"));
}

void print_final(const CounterRegistry& counters, const LossTotals& loss) {
  std::printf("efu: final counters\n");
  for (const CounterSample& c : counters.sample()) {
    std::printf("  %-44s %llu\n", c.name.c_str(), static_cast<unsigned long long>(c.value));
  }
  // The loss totals are the gauges lost.datagrams and rejected.datagrams (efu/ops/loss.h).
  std::printf("efu: summary: packets received %llu, processed %llu, lost %llu, rejected %llu\n",
              static_cast<unsigned long long>(counters.value("receive.packets")),
              static_cast<unsigned long long>(counters.value("process.packets")),
              static_cast<unsigned long long>(loss.lost_datagrams),
              static_cast<unsigned long long>(loss.rejected_datagrams));
  print_delivery(counters);
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
  settings.receiver.sender = desc.uses_source;
  spdlog::info("efu {}: plugin {} {} from {}", EFU_VERSION, desc.name, desc.version, plugin.path);

  // The signal thread before any other thread (Kafka's, the interfaces', the data path's):
  // every thread started after it inherits the blocked signal mask, so only it takes SIGTERM.
  StopRequest stop_request;
  SignalWatcher signal_watcher(stop_request);

  CounterRegistry counters;
  std::unique_ptr<Outputs> outputs = settings.outputs.broker == "none"
                                         ? make_null_outputs(settings.outputs, counters)
                                         : make_kafka_outputs(settings.outputs, counters);
  if (settings.outputs.broker == "none") {
    spdlog::info("kafka: --broker none, events are counted and discarded");
  }

  // The plugin's init() once, then a pipeline per processing thread on what it loaded
  // (architecture.md §2.2); at the end of run() the pipelines go first, then release().
  warn_if_unrouted(desc, settings.threads);
  const PluginInstance pipelines(desc, values, counters, settings.threads,
                                 [&](unsigned i) -> EventSink& { return outputs->events(i); });

  // Size the data path and check that it fits before allocating it.
  const unsigned receivers = settings.receive_threads;
  const unsigned process_batch = settings.receiver.batch_size;
  const std::size_t ring_capacity = std::bit_ceil(settings.ring_size);
  const std::size_t pool_slots = pool_slots_needed(settings.threads, ring_capacity,
                                                   settings.receiver.batch_size, process_batch);
  // af_xdp in place: a pool slot is the UMEM frames one datagram can span.
  const std::size_t slot_size =
      !settings.af_xdp ? receive_slot_size(settings.receiver)
      : settings.xdp_receiver.in_place
          ? std::size_t{4096} * xdp::frames_per_datagram(settings.receiver.max_datagram)
          : settings.receiver.max_datagram;
  check_memory(settings, pool_slots, slot_size, ring_capacity);

  // The receive backend: UDP sockets (recvmmsg; several on one port with SO_REUSEPORT) or an
  // AF_XDP socket with efu's XDP program.
  std::deque<UdpSocket> sockets;
  std::unique_ptr<xdp::XdpSocket> xdp_socket;
  if (settings.af_xdp) {
    xdp_socket = open_xdp_socket(settings, pool_slots);
  } else {
    UdpSocketConfig config = settings.socket;
    for (unsigned r = 0; r < receivers; ++r) {
      sockets.emplace_back(config);
      config.port = sockets.front().bound_port();  // port 0: the others join the one it got
    }
  }

  // One pool per receive thread; lanes[r][p] from receive thread r to processing thread p.
  std::deque<PacketPool> pools;
  std::vector<std::vector<std::unique_ptr<Lane>>> lanes(receivers);
  try {
    for (unsigned r = 0; r < receivers; ++r) {
      if (settings.xdp_receiver.in_place) {
        pools.emplace_back(xdp_socket->umem_frames(), xdp::XdpSocket::kFrameSize,
                           xdp_socket->umem());
      } else {
        pools.emplace_back(pool_slots, slot_size);
      }
      for (unsigned p = 0; p < settings.threads; ++p) {
        lanes[r].push_back(std::make_unique<Lane>(ring_capacity, pools.back()));
      }
    }
  } catch (const std::bad_alloc&) {
    throw ConfigError(fmt::format(
        "--ring-size {} x --processing-threads {} x --receive-threads {}: cannot allocate the "
        "packet pools ({} slots of {} B each per receive thread); expected smaller values",
        settings.ring_size, settings.threads, receivers, pool_slots, slot_size));
  }
  spdlog::info(
      "data path: {} receive thread(s), {} processing thread(s), ring {} packets each, pool {} "
      "slots of {} B per receive thread{}",
      receivers, settings.threads, ring_capacity, pools.front().slots(), pools.front().slot_size(),
      settings.receiver.gro            ? ", UDP GRO on"
      : settings.xdp_receiver.in_place ? " (the UMEM: payloads read in place)"
      : settings.af_xdp                ? " (payloads copied from the UMEM)"
                                       : "");

  std::deque<Receiver> socket_receivers;
  std::unique_ptr<xdp::XdpReceiver> xdp_receiver;
  for (unsigned r = 0; r < receivers; ++r) {
    std::vector<Lane*> mine;
    for (auto& lane : lanes[r]) mine.push_back(lane.get());
    if (xdp_socket) {
      xdp_receiver = std::make_unique<xdp::XdpReceiver>(*xdp_socket, settings.xdp_receiver,
                                                        pools[r], mine, desc.route_key, counters);
    } else {
      socket_receivers.emplace_back(sockets[r].fd(), settings.receiver, pools[r], mine,
                                    desc.route_key, counters);
    }
  }
  std::vector<std::unique_ptr<Processor>> processors;
  ProcessorConfig pconf;
  pconf.batch_size = process_batch;
  pconf.raw_sample_every = settings.outputs.raw_sample_every;
  pconf.wait_policy = settings.wait_policy;
  for (unsigned p = 0; p < settings.threads; ++p) {
    std::vector<Lane*> mine;
    for (unsigned r = 0; r < receivers; ++r) mine.push_back(lanes[r][p].get());
    processors.push_back(std::make_unique<Processor>(mine, pipelines.pipeline(p),
                                                     outputs->events(p), outputs->raw(p), pconf,
                                                     counters));
  }

  StatsPublisher publisher(counters, settings.stats_interval);
  LogStatsSink log_sink;
  LossWarningSink loss_warnings;
  publisher.add_sink(&log_sink);
  publisher.add_sink(&loss_warnings);
  if (StatsSink* status = outputs->status(); status != nullptr) publisher.add_sink(status);
  Counter& ring_fill = counters.gauge("receive.ring.fill");
  LossGauges loss(counters);
  if (!sockets.empty()) {
    counters.gauge("receive.socket.rcvbuf_bytes").set(sockets.front().granted_rcvbuf());
  }
  // With several receive threads, each one's own figures beside the summed ones (written by the
  // publisher thread from the receivers' counters: nothing extra on the hot path).
  struct PerThread {
    const Receiver* receiver;
    Counter* packets;
    Counter* bytes;
    Counter* kernel;
    Counter* ring_full;
  };
  std::vector<PerThread> per_thread;
  if (receivers > 1) {
    for (unsigned r = 0; r < receivers; ++r) {
      const std::string prefix = "receive.rx" + std::to_string(r) + ".";
      per_thread.push_back(PerThread{&socket_receivers[r], &counters.counter(prefix + "packets"),
                                     &counters.counter(prefix + "bytes"),
                                     &counters.counter(prefix + "dropped.kernel"),
                                     &counters.counter(prefix + "dropped.ring_full")});
    }
  }
  publisher.add_gauge_updater([&] {
    std::uint64_t fill = 0;
    for (const auto& row : lanes) {
      for (const auto& lane : row) fill += lane->packets.size();
    }
    ring_fill.set(fill);
    for (const PerThread& t : per_thread) {
      const ReceiverCounters c = t.receiver->own_counters();
      t.packets->set(c.packets);
      t.bytes->set(c.bytes);
      t.kernel->set(c.dropped_kernel);
      t.ring_full->set(c.dropped_ring_full);
    }
  });
  // Kernel drops: each socket's count read every poll period (100 ms) here, off the receive
  // threads, which add what is new at their next call (Receiver::poll_kernel_drops).
  Counter& drop_reads_failed = counters.counter("receive.failed.kernel_drop_reads");
  publisher.add_gauge_updater([&] {
    std::uint64_t failed = 0;
    for (const Receiver& r : socket_receivers) failed += r.poll_failures();
    drop_reads_failed.set(failed);
  });
  publisher.add_gauge_updater([&] { loss.update(); });
  publisher.set_poll([&] {
    outputs->poll();
    for (Receiver& r : socket_receivers) r.poll_kernel_drops();
  });
  OperatorInterfaces ops(settings.ops, counters, publisher);
  counters.freeze();

  {
    DataThreads threads;
    for (unsigned r = 0; r < receivers; ++r) {
      std::optional<int> core;
      if (r < settings.cpu.rx.size()) core = settings.cpu.rx[r];
      const std::string name = receivers > 1 ? "efu-rx" + std::to_string(r) : "efu-rx";
      if (xdp_receiver) {
        threads.start_receiver(name, core, [&] { xdp_receiver->run(threads.receiver_stop()); });
      } else {
        Receiver& receiver = socket_receivers[r];
        threads.start_receiver(name, core,
                               [&threads, &receiver] { receiver.run(threads.receiver_stop()); });
      }
    }
    for (unsigned p = 0; p < settings.threads; ++p) {
      std::optional<int> core;
      if (p < settings.cpu.proc.size()) core = settings.cpu.proc[p];
      Processor& processor = *processors[p];
      threads.start_processor(
          "efu-proc" + std::to_string(p), core,
          [&threads, &processor] { processor.run(threads.input_done()); }, &processor.wakeup());
    }
    for (const DataThread& t : threads.receivers()) {
      wait_for_tid(t);
      publisher.cpu().add_thread(t.name, t.tid.load());
    }
    for (const DataThread& t : threads.processors()) {
      wait_for_tid(t);
      publisher.cpu().add_thread(t.name, t.tid.load());
    }
    publisher.start(-1);
    ops.start([&] { stop_request.request("command port EXIT"); });
    notify_service_manager("READY=1");
    spdlog::info("running{}", settings.stop_after_s > 0
                                  ? fmt::format(" for {} s", settings.stop_after_s)
                                  : std::string(" until SIGINT/SIGTERM"));

    const auto deadline = settings.stop_after_s > 0
                              ? std::chrono::steady_clock::now() +
                                    std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                        std::chrono::duration<double>(settings.stop_after_s))
                              : std::chrono::steady_clock::time_point::max();
    const std::string reason = stop_request.wait(deadline);
    spdlog::info("stopping ({}): draining sockets and rings", reason);
    notify_service_manager("STOPPING=1");

    // Order matters: no new packets (each receive thread first takes what its socket holds),
    // then every queued packet through its pipeline, then the pipelines' pending events out,
    // then Kafka deliveries, then the final report.
    threads.stop();
  }
  publisher.stop();
  const auto flush_timeout =
      std::chrono::milliseconds(static_cast<std::int64_t>(settings.flush_timeout_s * 1000));
  std::uint64_t undelivered = outputs->flush(flush_timeout);
  // One last status with the final counters (the publisher thread has ended: this thread is
  // now the only one touching the outputs).
  publisher.publish_now();
  undelivered += outputs->flush(std::chrono::milliseconds(
      std::min<std::int64_t>(1000, static_cast<std::int64_t>(settings.flush_timeout_s * 1000))));
  if (undelivered != 0) {
    spdlog::warn("kafka: {} message(s) not delivered within --flush-timeout {} s, purged",
                 undelivered, settings.flush_timeout_s);
  }
  ops.stop();
  const LossTotals totals = loss.update();  // the final values, for the summary and the file
  print_final(counters, totals);
  if (!settings.stats_json.empty()) write_stats_json(settings.stats_json, counters);
  spdlog::info("stopped");
  return 0;
}

}  // namespace

int run_efu(int argc, const char* const* argv) {
  static std::once_flag logging_once;
  std::call_once(logging_once, setup_logging);
  // Every failure ends in one line: a configuration or start-up problem with exit code 2,
  // anything else with 1. The threads were stopped and joined on the way out (DataThreads,
  // SignalWatcher).
  try {
    return run(argc, argv);
  } catch (const ConfigError& e) {
    std::fprintf(stderr, "efu: error: %s\n", e.what());
    return kExitConfigError;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr,
                 "efu: error: out of memory; expected smaller --ring-size, "
                 "--processing-threads or --max-datagram\n");
    return kExitConfigError;
  } catch (...) {
    std::fprintf(stderr, "efu: fatal: %s\n", current_exception_text().c_str());
    return 1;
  }
}

}  // namespace efu
