#include "startup/data_path_assembly.h"

#include <bit>
#include <new>
#include <optional>
#include <string>

#include <spdlog/spdlog.h>

#include "efu/errors.h"
#include "startup/memory_budget.h"

namespace efu {
namespace {

DataPathSize size_data_path(const HostSettings& s) {
  DataPathSize z{};
  z.receivers = s.receive_threads;
  z.processors = s.threads;
  z.process_batch = s.receiver.batch_size;
  z.ring_capacity = std::bit_ceil(s.ring_size);
  z.pool_slots =
      pool_slots_needed(s.threads, z.ring_capacity, s.receiver.batch_size, z.process_batch);
  // af_xdp in place: a pool slot is the UMEM frames one datagram can span.
  z.slot_size = !s.af_xdp ? receive_slot_size(s.receiver)
                : s.xdp_receiver.in_place
                    ? std::size_t{4096} * xdp::frames_per_datagram(s.receiver.max_datagram)
                    : s.receiver.max_datagram;
  return z;
}

/// Refuses a data path whose packet pools and rings do not fit in memory, in one line naming
/// the options that size it (docs/architecture.md §3.8).
void check_memory(const HostSettings& s, const DataPathSize& z) {
  const double pools = static_cast<double>(s.receive_threads) * static_cast<double>(z.pool_slots) *
                       static_cast<double>(z.slot_size);
  const double rings = static_cast<double>(s.receive_threads) * s.threads *
                       (static_cast<double>(z.ring_capacity) * sizeof(PacketRef) +
                        static_cast<double>(z.pool_slots) * sizeof(std::uint32_t));
  const double need = pools + rings;
  const MemoryBudget budget = available_memory();
  // Leave a quarter of what is available for Kafka's queue, the plugins and the rest.
  if (budget.bytes != 0 && need > 0.75 * static_cast<double>(budget.bytes)) {
    throw ConfigError(fmt::format(
        "--ring-size {} x --processing-threads {} x --receive-threads {} needs {} of packet "
        "slots ({} B each{}) and rings, but {} of memory is available ({}); expected a smaller "
        "--ring-size, --processing-threads, --receive-threads or --max-datagram",
        s.ring_size, s.threads, s.receive_threads, format_bytes(static_cast<std::uint64_t>(need)),
        z.slot_size, s.receiver.gro ? ", --gro on" : "", format_bytes(budget.bytes),
        budget.source));
  }
}

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

std::optional<int> core_of(const std::vector<int>& cores, unsigned i) {
  if (i < cores.size()) return cores[i];
  return std::nullopt;
}

}  // namespace

std::unique_ptr<Outputs> open_outputs(const OutputSettings& settings, CounterRegistry& counters) {
  if (settings.broker != "none") return make_kafka_outputs(settings, counters);
  std::unique_ptr<Outputs> outputs = make_null_outputs(settings, counters);
  spdlog::info("kafka: --broker none, events are counted and discarded");
  return outputs;
}

// ---- assembly, in the order of docs/architecture.md §8.1 -----------------------------------

DataPath::DataPath(const HostSettings& settings, const PluginDescriptor& plugin,
                   const PluginInstance& pipelines, Outputs& outputs, CounterRegistry& counters)
    : size_(size_data_path(settings)) {
  check_memory(settings, size_);  // before anything is allocated
  open_receive_backend(settings);
  make_pools_and_lanes(settings);
  log_layout(settings);
  make_receivers(settings, plugin, counters);
  make_processors(settings, pipelines, outputs, counters);
}

/// UDP sockets (recvmmsg; several on one port with SO_REUSEPORT) or an AF_XDP socket with
/// efu's XDP program.
void DataPath::open_receive_backend(const HostSettings& settings) {
  if (settings.af_xdp) {
    xdp_socket_ = open_xdp_socket(settings, size_.pool_slots);
    return;
  }
  UdpSocketConfig config = settings.socket;
  for (unsigned r = 0; r < size_.receivers; ++r) {
    sockets_.emplace_back(config);
    config.port = sockets_.front().bound_port();  // port 0: the others join the one it got
  }
}

/// One pool per receive thread (in place: the AF_XDP socket's UMEM); lanes_[r][p] from receive
/// thread r to processing thread p.
void DataPath::make_pools_and_lanes(const HostSettings& settings) {
  lanes_.resize(size_.receivers);
  try {
    for (unsigned r = 0; r < size_.receivers; ++r) {
      if (settings.xdp_receiver.in_place) {
        pools_.emplace_back(xdp_socket_->umem_frames(), xdp::XdpSocket::kFrameSize,
                            xdp_socket_->umem());
      } else {
        pools_.emplace_back(size_.pool_slots, size_.slot_size);
      }
      for (unsigned p = 0; p < size_.processors; ++p) {
        lanes_[r].push_back(std::make_unique<Lane>(size_.ring_capacity, pools_.back()));
      }
    }
  } catch (const std::bad_alloc&) {
    throw ConfigError(fmt::format(
        "--ring-size {} x --processing-threads {} x --receive-threads {}: cannot allocate the "
        "packet pools ({} slots of {} B each per receive thread); expected smaller values",
        settings.ring_size, size_.processors, size_.receivers, size_.pool_slots, size_.slot_size));
  }
}

void DataPath::log_layout(const HostSettings& settings) const {
  spdlog::info(
      "data path: {} receive thread(s), {} processing thread(s), ring {} packets each, pool {} "
      "slots of {} B per receive thread{}",
      size_.receivers, size_.processors, size_.ring_capacity, pools_.front().slots(),
      pools_.front().slot_size(),
      settings.receiver.gro            ? ", UDP GRO on"
      : settings.xdp_receiver.in_place ? " (the UMEM: payloads read in place)"
      : settings.af_xdp                ? " (payloads copied from the UMEM)"
                                       : "");
}

void DataPath::make_receivers(const HostSettings& settings, const PluginDescriptor& plugin,
                              CounterRegistry& counters) {
  for (unsigned r = 0; r < size_.receivers; ++r) {
    std::vector<Lane*> mine;
    for (auto& lane : lanes_[r]) mine.push_back(lane.get());
    if (xdp_socket_) {
      xdp_receiver_ = std::make_unique<xdp::XdpReceiver>(
          *xdp_socket_, settings.xdp_receiver, pools_[r], mine, plugin.route_key, counters);
    } else {
      socket_receivers_.emplace_back(sockets_[r].fd(), settings.receiver, pools_[r], mine,
                                     plugin.route_key, counters);
    }
  }
}

void DataPath::make_processors(const HostSettings& settings, const PluginInstance& pipelines,
                               Outputs& outputs, CounterRegistry& counters) {
  ProcessorConfig pconf;
  pconf.batch_size = size_.process_batch;
  pconf.raw_sample_every = settings.outputs.raw_sample_every;
  pconf.wait_policy = settings.wait_policy;
  for (unsigned p = 0; p < size_.processors; ++p) {
    std::vector<Lane*> mine;
    for (unsigned r = 0; r < size_.receivers; ++r) mine.push_back(lanes_[r][p].get());
    processors_.push_back(std::make_unique<Processor>(
        mine, pipelines.pipeline(p), outputs.events(p), outputs.raw(p), pconf, counters));
  }
}

// ---- gauges and threads --------------------------------------------------------------------

void DataPath::add_gauges(StatsPublisher& publisher, CounterRegistry& counters) {
  ring_fill_ = &counters.gauge("receive.ring.fill");
  if (!sockets_.empty()) {
    counters.gauge("receive.socket.rcvbuf_bytes").set(sockets_.front().granted_rcvbuf());
  }
  // With several receive threads, each one's own figures beside the summed ones (written by
  // the publisher thread from the receivers' counters: nothing extra on the hot path).
  if (size_.receivers > 1) {
    for (unsigned r = 0; r < size_.receivers; ++r) {
      const std::string prefix = "receive.rx" + std::to_string(r) + ".";
      per_thread_.push_back(PerThread{&socket_receivers_[r], &counters.counter(prefix + "packets"),
                                      &counters.counter(prefix + "bytes"),
                                      &counters.counter(prefix + "dropped.kernel"),
                                      &counters.counter(prefix + "dropped.ring_full")});
    }
  }
  drop_reads_failed_ = &counters.counter("receive.failed.kernel_drop_reads");
  publisher.add_gauge_updater([this] { update_gauges(); });
}

void DataPath::update_gauges() {
  std::uint64_t fill = 0;
  for (const auto& row : lanes_) {
    for (const auto& lane : row) fill += lane->packets.size();
  }
  ring_fill_->set(fill);
  for (const PerThread& t : per_thread_) {
    const ReceiverCounters c = t.receiver->own_counters();
    t.packets->set(c.packets);
    t.bytes->set(c.bytes);
    t.kernel->set(c.dropped_kernel);
    t.ring_full->set(c.dropped_ring_full);
  }
  std::uint64_t failed = 0;
  for (const Receiver& r : socket_receivers_) failed += r.poll_failures();
  drop_reads_failed_->set(failed);
}

void DataPath::poll_kernel_drops() {
  for (Receiver& r : socket_receivers_) r.poll_kernel_drops();
}

void DataPath::start(DataThreads& threads, const CpuPlan& cpu) {
  for (unsigned r = 0; r < size_.receivers; ++r) {
    const std::string name = size_.receivers > 1 ? "efu-rx" + std::to_string(r) : "efu-rx";
    if (xdp_receiver_) {
      xdp::XdpReceiver& receiver = *xdp_receiver_;
      threads.start_receiver(name, core_of(cpu.rx, r),
                             [&threads, &receiver] { receiver.run(threads.receiver_stop()); });
    } else {
      Receiver& receiver = socket_receivers_[r];
      threads.start_receiver(name, core_of(cpu.rx, r),
                             [&threads, &receiver] { receiver.run(threads.receiver_stop()); });
    }
  }
  for (unsigned p = 0; p < size_.processors; ++p) {
    Processor& processor = *processors_[p];
    threads.start_processor(
        "efu-proc" + std::to_string(p), core_of(cpu.proc, p),
        [&threads, &processor] { processor.run(threads.input_done()); }, &processor.wakeup());
  }
}

// ---- the stats publisher -------------------------------------------------------------------

RunStats::RunStats(const HostSettings& settings, CounterRegistry& counters, Outputs& outputs,
                   DataPath& data_path)
    : loss_(counters), publisher_(counters, settings.stats_interval) {
  publisher_.add_sink(&log_sink_);
  publisher_.add_sink(&loss_warnings_);
  if (StatsSink* status = outputs.status(); status != nullptr) publisher_.add_sink(status);
  data_path.add_gauges(publisher_, counters);
  publisher_.add_gauge_updater([this] { loss_.update(); });
  publisher_.set_poll([&outputs, &data_path] {
    outputs.poll();
    data_path.poll_kernel_drops();
  });
}

}  // namespace efu
