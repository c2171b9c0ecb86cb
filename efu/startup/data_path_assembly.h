// The data path of one run, assembled in the order docs/architecture.md §8.1 gives: sized and
// checked against the memory (§3.8), then the receive backend's sockets (§3.5), a packet pool
// per receive thread (§3.3), the lanes (§3.2), the receivers and the processors; the threads
// that run them (§3.1); the stats publisher and the gauges it keeps for them (§4.3). Sections
// are those of docs/architecture.md.
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <vector>

#include "efu/counters.h"
#include "efu/outputs.h"
#include "efu/packet_pool.h"
#include "efu/plugin.h"
#include "ops/loss.h"
#include "ops/stats_publisher.h"
#include "process/data_path.h"
#include "process/processor.h"
#include "receive/af_xdp/xdp_receiver.h"
#include "receive/af_xdp/xdp_socket.h"
#include "receive/receiver.h"
#include "receive/udp_socket.h"
#include "startup/lifecycle.h"
#include "startup/plugin_loader.h"
#include "startup/settings.h"
#include "startup/threads.h"

namespace efu {

/// The run's outputs: Kafka, or with --broker none outputs that count and discard
/// (docs/architecture.md §6).
std::unique_ptr<Outputs> open_outputs(const OutputSettings& settings, CounterRegistry& counters);

/// The sizes of the data path, from the settings, before anything is allocated.
struct DataPathSize {
  unsigned receivers;         // receive threads, one pool each
  unsigned processors;        // processing threads, one lane per receive thread each
  unsigned process_batch;     // packets per Pipeline::process() call at most
  std::size_t ring_capacity;  // packets per lane's ring
  std::size_t pool_slots;     // per pool
  std::size_t slot_size;      // bytes per pool slot
};

/// Sockets, pools, lanes[r][p] from receive thread r to processing thread p, receivers and
/// processors. Members are declared in the order they are made, so they go in reverse: the
/// processors (which hold the pipelines and outputs) first, the sockets last.
class DataPath {
 public:
  /// Throws ConfigError: too little memory for the pools and rings (one line naming the options
  /// that size them), a socket that cannot be bound, an AF_XDP socket that cannot be made.
  DataPath(const HostSettings& settings, const PluginDescriptor& plugin,
           const PluginInstance& pipelines, Outputs& outputs, CounterRegistry& counters);
  DataPath(const DataPath&) = delete;
  DataPath& operator=(const DataPath&) = delete;

  /// Registers receive.ring.fill, receive.socket.rcvbuf_bytes, receive.failed.kernel_drop_reads
  /// and, with several receive threads, each one's receive.rxN.* figures, and has `publisher`
  /// update them off the data threads. Before counters.freeze().
  void add_gauges(StatsPublisher& publisher, CounterRegistry& counters);
  /// Reads each socket's kernel drop count (the publisher's poll, every 100 ms): off the receive
  /// threads, which add what is new at their next call (Receiver::poll_kernel_drops).
  void poll_kernel_drops();
  /// Starts a receive thread per receiver, then a processing thread per processor, pinned to
  /// the cores `cpu` names.
  void start(DataThreads& threads, const CpuPlan& cpu);

 private:
  void open_receive_backend(const HostSettings& settings);
  void make_pools_and_lanes(const HostSettings& settings);
  void log_layout(const HostSettings& settings) const;
  void make_receivers(const HostSettings& settings, const PluginDescriptor& plugin,
                      CounterRegistry& counters);
  void make_processors(const HostSettings& settings, const PluginInstance& pipelines,
                       Outputs& outputs, CounterRegistry& counters);
  void update_gauges();

  /// One receive thread's own figures beside the summed ones.
  struct PerThread {
    const Receiver* receiver;
    Counter* packets;
    Counter* bytes;
    Counter* kernel;
    Counter* ring_full;
  };

  DataPathSize size_;
  std::deque<UdpSocket> sockets_;
  std::unique_ptr<xdp::XdpSocket> xdp_socket_;
  std::deque<PacketPool> pools_;
  std::vector<std::vector<std::unique_ptr<Lane>>> lanes_;
  std::deque<Receiver> socket_receivers_;
  std::unique_ptr<xdp::XdpReceiver> xdp_receiver_;
  std::vector<std::unique_ptr<Processor>> processors_;
  Counter* ring_fill_ = nullptr;
  Counter* drop_reads_failed_ = nullptr;
  std::vector<PerThread> per_thread_;
};

/// The stats publisher of a run and what it feeds: the log line, the loss warnings, the status
/// output; the data path's gauges and the loss gauges (docs/architecture.md §4.3, §4.4).
class RunStats {
 public:
  /// Before counters.freeze(); the publisher's thread starts later (run_data_threads).
  RunStats(const HostSettings& settings, CounterRegistry& counters, Outputs& outputs,
           DataPath& data_path);
  RunStats(const RunStats&) = delete;
  RunStats& operator=(const RunStats&) = delete;

  StatsPublisher& publisher() noexcept { return publisher_; }
  /// The loss gauges set once more: the final values, for the summary and --stats-json.
  LossTotals final_loss() { return loss_.update(); }

 private:
  LogStatsSink log_sink_;
  LossWarningSink loss_warnings_;
  LossGauges loss_;
  StatsPublisher publisher_;  // last: it goes first, so nothing it calls is gone before it
};

}  // namespace efu
