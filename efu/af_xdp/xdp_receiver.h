// The af_xdp backend's receive loop: frames from the AF_XDP rx ring are parsed, their UDP
// payloads copied into the host's packet slots and routed to the lanes exactly like the socket
// receiver's datagrams, so plugins cannot tell the backends apart (design.md §1).
//
// Why copy into the pool instead of handing UMEM frames to the pipelines: every UMEM frame goes
// back to the fill ring within the batch that received it, so a slow processing thread can
// never starve the kernel of frames (its backlog stays in the host's rings, where ring-full
// drops are counted as for the socket backend); multi-buffer (jumbo) frames, which arrive in
// frames that are not contiguous, need a copy in any design; and the pool, rings and processors
// stay the same for both backends. Measured: the copy and hand-off add 40-250 ns per datagram up
// to 1472 B (benchmarks/results/af_xdp/README.md).
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "af_xdp/frame_parser.h"
#include "af_xdp/xdp_socket.h"
#include "data_path.h"
#include "efu/counters.h"
#include "efu/packet_pool.h"
#include "efu/plugin.h"
#include "lane_dispatch.h"

namespace efu::xdp {

struct XdpReceiverConfig {
  unsigned batch_size = 64;           // frames taken from the rx ring at most per pass
  std::uint32_t max_datagram = 9000;  // larger UDP payloads are counted as receive.truncated
  bool verify_checksums = false;      // IPv4 header and UDP checksums
  int idle_wait_ms = 100;             // poll() timeout when the rx ring is empty
};

/// The sender of a parsed frame as the socket backend reports it (recvmmsg's msg_name): family,
/// address and port; a link-local IPv6 sender is scoped to `ifindex`.
PacketSource packet_source(const ParsedFrame& frame, unsigned ifindex) noexcept;

class XdpReceiver {
 public:
  /// All buffers are allocated here; receive_batch() allocates nothing.
  XdpReceiver(XdpSocket& socket, const XdpReceiverConfig& config, PacketPool& pool,
              std::vector<Lane*> lanes, RouteKeyFn route_key, CounterRegistry& counters);

  /// One pass: take back freed slots, take up to a batch of frames from the rx ring, parse and
  /// copy them, give the frames back to the fill ring, route the datagrams to their lanes.
  /// Returns the number of frames taken (0: the rx ring was empty). Never blocks.
  unsigned receive_batch();

  /// Waits up to the idle timeout for frames (one poll()).
  void wait_for_frames();

  /// Receives until `stop` is set, then takes what is still in the rx ring and reads the
  /// kernel's counters a last time, so that the final counts are complete.
  void run(const std::atomic<bool>& stop);

  /// Reads the kernel's and the XDP program's counters into efu's. Slow work: run() calls it
  /// every ~100 ms and at the end.
  void update_kernel_counters();

 private:
  // One frame of `descs` descriptors starting at rx index `first`: parse, copy, stage.
  void take_frame(std::uint32_t first, std::uint32_t descs);

  XdpSocket& socket_;
  XdpReceiverConfig config_;
  PacketPool& pool_;
  FrameFilter filter_;
  std::uint8_t* umem_;
  unsigned ifindex_;
  std::uint64_t frame_mask_;

  std::vector<std::uint64_t> used_frames_;  // this pass's frames, for the fill ring
  XdpKernelCounters kernel_seen_;
  std::uint64_t next_counter_update_ns_ = 0;

  Counter& packets_;
  Counter& bytes_;
  Counter& truncated_;
  Counter& empty_;
  Counter& dropped_kernel_;
  Counter& dropped_ring_full_;
  Counter& no_free_slot_;
  Counter& kernel_rx_dropped_;
  Counter& kernel_rx_ring_full_;
  Counter& kernel_invalid_descs_;
  Counter& kernel_fill_ring_empty_;
  Counter& no_socket_;
  Counter& frames_;
  std::vector<Counter*> frame_errors_;  // by FrameError
  LaneDispatch dispatch_;               // after the counters: it refers to dropped_ring_full_
};

}  // namespace efu::xdp
