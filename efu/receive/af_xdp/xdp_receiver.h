// The af_xdp backend's receive loop: frames from the AF_XDP rx ring are parsed and their UDP
// payloads routed to the lanes exactly like the socket receiver's datagrams, so plugins cannot
// tell the backends apart (docs/architecture.md §1.1). Two ways to hand a payload on:
//
// In place (XdpReceiverConfig::in_place, --xdp-in-place on, the default): the pool's slots are
// the UMEM frames, so a PacketRef names the frame and the payload's offset in it, and the
// pipelines read the bytes where the kernel wrote them. The receive thread reads only the
// headers. A datagram larger than one frame (a jumbo frame arrives in several 4 KiB buffers
// that are not next to each other: the kernel allows no frame larger than a page) goes on as a
// chain of its frames (SlotChain), which its processing thread gathers into its own buffer. A
// frame goes back to the fill ring when its processing thread returns the slot (a chain's
// other frames when the receive thread reuses its head); the UMEM has the fill ring's frames
// plus every frame the lanes can hold (pool_slots_needed × frames per datagram), so a slow
// processing thread fills its ring (counted as receive.dropped.ring_full) before the kernel
// runs short of frames.
//
// Copy (--xdp-in-place off): the payload, possibly spread over a multi-buffer frame's buffers,
// is copied into a slot of the host's own pool on the receive thread and the frame goes back to
// the fill ring in the same pass.
//
// Measured (benchmarks/results/af_xdp/README.md): the copy is most of the receive thread's cost
// at 1472 B and 8972 B.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "receive/af_xdp/frame_parser.h"
#include "receive/af_xdp/xdp_socket.h"
#include "process/data_path.h"
#include "efu/counters.h"
#include "efu/packet_pool.h"
#include "efu/plugin.h"
#include "process/lane_dispatch.h"
#include "receive/receive_counters.h"

namespace efu::xdp {

/// How many UMEM frames a datagram of `max_datagram` bytes needs at most, with its Ethernet
/// (one VLAN tag), IPv6 and UDP headers.
constexpr std::uint32_t frames_per_datagram(std::uint32_t max_datagram) noexcept {
  return (max_datagram + 18 + 40 + 8 + XdpSocket::kFrameData - 1) / XdpSocket::kFrameData;
}

struct XdpReceiverConfig {
  unsigned batch_size = 64;           // frames taken from the rx ring at most per pass
  std::uint32_t max_datagram = 9000;  // larger UDP payloads are counted as receive.truncated
  bool verify_checksums = false;      // IPv4 header and UDP checksums
  int idle_wait_ms = 100;             // poll() timeout when the rx ring is empty
  bool in_place = false;              // the pool is the socket's UMEM (see above)
};

/// The sender of a parsed frame as the socket backend reports it (recvmmsg's msg_name): family,
/// address and port; a link-local IPv6 sender is scoped to `ifindex`.
PacketSource packet_source(const ParsedFrame& frame, unsigned ifindex) noexcept;

class XdpReceiver {
 public:
  /// All buffers are allocated here; receive_batch() allocates nothing. In place, `pool` must
  /// be the socket's UMEM (its slots its frames) and the socket must not have been prefilled:
  /// the receiver puts the first frames on the fill ring here.
  XdpReceiver(XdpSocket& socket, const XdpReceiverConfig& config, PacketPool& pool,
              std::vector<Lane*> lanes, RouteKeyFn route_key, CounterRegistry& counters);

  /// One pass: take back freed slots, take up to a batch of frames from the rx ring, parse them,
  /// route the datagrams to their lanes. Copying, each payload is copied into a slot and the
  /// frames go back to the fill ring; in place, the frames with a datagram go to the lanes and
  /// freed slots go to the fill ring. Returns the number of rx descriptors taken (0: the rx ring
  /// was empty). Never blocks.
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
  // Takes up to `want` rx descriptors, extended to whole frames, and calls
  // take(first, descs, next) for each frame (its first descriptor's rx index, its descriptor
  // count, the next frame's first descriptor or nullptr); releases them. Returns how many.
  template <typename TakeFrame>
  std::uint32_t for_each_frame(std::uint32_t want, TakeFrame&& take);
  unsigned receive_copy();
  unsigned receive_in_place();
  // One frame of `descs` descriptors starting at rx index `first`: parse, copy, stage.
  void take_frame(std::uint32_t first, std::uint32_t descs);
  // The same in place: stage the frame's own slot, or give its buffers' slots back (counted).
  void take_in_place(std::uint32_t first, std::uint32_t descs);
  // In place: free slots onto the fill ring, as many as it has room for; a slot that heads a
  // chain frees the chain's other slots first.
  void refill();
  // Parse checks shared by both ways; false (counted) if the frame is not passed on.
  bool accept(const ParsedFrame& f);

  XdpSocket& socket_;
  XdpReceiverConfig config_;
  PacketPool& pool_;
  FrameFilter filter_;
  std::uint8_t* umem_;
  unsigned ifindex_;

  std::vector<std::uint64_t> used_frames_;  // this pass's frames, for the fill ring
  std::vector<SlotChain> chains_;           // in place: by head slot, read by the lanes' threads
  std::vector<std::uint32_t> refill_;       // in place: the slots of one refill
  std::vector<std::uint8_t> check_buffer_;  // in place: a chain gathered to verify its checksum
  XdpKernelCounters kernel_seen_;
  std::uint64_t next_counter_update_ns_ = 0;

  ReceiveCounters counters_;  // the receive.* names both backends keep; the rest are af_xdp's
  Counter& kernel_rx_dropped_;
  Counter& kernel_rx_ring_full_;
  Counter& kernel_invalid_descs_;
  Counter& kernel_fill_ring_empty_;
  Counter& no_socket_;
  Counter& frames_;
  std::vector<Counter*> frame_errors_;  // by FrameError
  LaneDispatch dispatch_;               // after the counters: it refers to dropped_ring_full
};

}  // namespace efu::xdp
