#include "receive/af_xdp/xdp_receiver.h"

#include <arpa/inet.h>
#include <poll.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>

#include "process/lane_dispatch.h"

// Newer than the kernel headers of Debian 12 (6.1); the kernel's ABI from 6.6 on.
#ifndef XDP_PKT_CONTD
#define XDP_PKT_CONTD (1 << 0)
#endif

namespace efu::xdp {
namespace {
constexpr std::uint64_t kCounterUpdateNs = 100'000'000;
constexpr std::uint64_t kDrainAtStopNs = 1'000'000'000;
// A UMEM address's frame (slot) and its offset in the frame.
constexpr unsigned kFrameShift = std::countr_zero(XdpSocket::kFrameSize);
constexpr std::uint64_t kFrameMask = ~static_cast<std::uint64_t>(XdpSocket::kFrameSize - 1);

std::uint64_t steady_now_ns() noexcept {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}
}  // namespace

PacketSource packet_source(const ParsedFrame& frame, unsigned ifindex) noexcept {
  PacketSource s{};
  if (frame.ip_version == 4) {
    s.v4.sin_family = AF_INET;
    s.v4.sin_port = htons(frame.source_port);
    std::memcpy(&s.v4.sin_addr, frame.source_address.data(), 4);
  } else if (frame.ip_version == 6) {
    s.v6.sin6_family = AF_INET6;
    s.v6.sin6_port = htons(frame.source_port);
    std::memcpy(s.v6.sin6_addr.s6_addr, frame.source_address.data(), 16);
    // As the kernel reports it to a socket: a link-local sender is scoped to its interface.
    if (IN6_IS_ADDR_LINKLOCAL(&s.v6.sin6_addr)) s.v6.sin6_scope_id = ifindex;
  }
  return s;
}

XdpReceiver::XdpReceiver(XdpSocket& socket, const XdpReceiverConfig& config, PacketPool& pool,
                         std::vector<Lane*> lanes, RouteKeyFn route_key, CounterRegistry& counters)
    : socket_(socket),
      config_(config),
      pool_(pool),
      filter_(socket.filter()),
      umem_(socket.umem()),
      ifindex_(socket.ifindex()),
      counters_(counters),
      kernel_rx_dropped_(counters.counter("receive.xdp.kernel.rx_dropped")),
      kernel_rx_ring_full_(counters.counter("receive.xdp.kernel.rx_ring_full")),
      kernel_invalid_descs_(counters.counter("receive.xdp.kernel.invalid_descs")),
      kernel_fill_ring_empty_(counters.counter("receive.xdp.kernel.fill_ring_empty")),
      no_socket_(counters.counter("receive.xdp.dropped.no_socket")),
      frames_(counters.counter("receive.xdp.frames")),
      dispatch_(pool, lanes, route_key, config.batch_size, counters_.dropped_ring_full) {
  filter_.verify_ip_checksum = config.verify_checksums;
  frame_errors_.assign(kFrameErrorCount, nullptr);
  for (std::size_t e = 1; e < kFrameErrorCount; ++e) {
    frame_errors_[e] = &counters.counter(std::string("receive.xdp.errors.") + kFrameErrorNames[e]);
  }
  // A pass takes at most a batch of frames, each of at most 17 buffers (MAX_SKB_FRAGS + 1).
  used_frames_.reserve(static_cast<std::size_t>(config.batch_size) * 17 + 17);
  kernel_seen_ = socket_.read_counters();  // counts from before efu's socket existed are not ours
  if (config_.in_place) {
    if (pool_.data(0) != umem_ || pool_.slot_size() != XdpSocket::kFrameSize ||
        pool_.slots() != socket_.umem_frames()) {
      throw std::logic_error("XdpReceiver: in place needs the socket's UMEM as its pool");
    }
    chains_.resize(pool_.slots());
    refill_.reserve(socket_.frames());
    check_buffer_.resize(config_.verify_checksums ? config_.max_datagram : 0);
    for (Lane* lane : lanes) {
      lane->chains = chains_.data();
      lane->chain_max_size = config_.max_datagram;
    }
    refill();
  }
}

bool XdpReceiver::accept(const ParsedFrame& f) {
  if (f.error != FrameError::kNone) {
    frame_errors_[static_cast<std::size_t>(f.error)]->add();
    return false;
  }
  if (f.payload_size == 0) {
    counters_.empty.add();
    return false;
  }
  if (f.payload_size > config_.max_datagram) {
    counters_.truncated.add();
    return false;
  }
  return true;
}

void XdpReceiver::take_frame(std::uint32_t first, std::uint32_t descs) {
  xsk_ring_cons& rx = socket_.rx();
  std::uint32_t frame_size = 0;
  for (std::uint32_t i = 0; i < descs; ++i) {
    const xdp_desc* d = xsk_ring_cons__rx_desc(&rx, first + i);
    used_frames_.push_back(d->addr & kFrameMask);
    frame_size += d->len;
  }
  frames_.add();
  const xdp_desc* head_desc = xsk_ring_cons__rx_desc(&rx, first);
  const std::span<const std::uint8_t> head(umem_ + head_desc->addr, head_desc->len);
  const ParsedFrame f = parse_frame(head, frame_size, filter_);
  if (!accept(f)) return;
  // The payload, possibly spread over the frame's buffers, into one contiguous slot.
  const std::uint32_t slot = dispatch_.peek_free(0);
  std::uint8_t* out = pool_.data(slot);
  std::uint32_t left = f.payload_size;
  std::uint32_t from = f.payload_offset;
  for (std::uint32_t i = 0; i < descs && left != 0; ++i) {
    const xdp_desc* d = xsk_ring_cons__rx_desc(&rx, first + i);
    if (from < d->len) {
      const std::uint32_t n = std::min(left, d->len - from);
      std::memcpy(out, umem_ + d->addr + from, n);
      out += n;
      left -= n;
      from = 0;
    } else {
      from -= d->len;
    }
  }
  const std::span<const std::uint8_t> payload(pool_.data(slot), f.payload_size);
  if (config_.verify_checksums && !udp_checksum_valid(head, f, payload)) {
    frame_errors_[static_cast<std::size_t>(FrameError::kUdpChecksum)]->add();
    return;
  }
  dispatch_.take();
  pool_.source(slot) = packet_source(f, ifindex_);
  dispatch_.stage_single(slot, f.payload_size);
  counters_.packets.add();
  counters_.bytes.add(f.payload_size);
}

unsigned XdpReceiver::receive_batch() {
  return config_.in_place ? receive_in_place() : receive_copy();
}

void XdpReceiver::refill() {
  xsk_ring_prod& fill = socket_.fill();
  const std::uint32_t room = xsk_prod_nb_free(&fill, socket_.frames());
  refill_.clear();
  while (refill_.size() < room && dispatch_.free_slots() != 0) {
    const std::uint32_t slot = dispatch_.take();
    SlotChain& chain = chains_[slot];
    if (chain.pieces > 1) {  // a chain's head: its other frames are free too
      for (std::uint32_t k = 1; k < chain.pieces; ++k) dispatch_.give_back(chain.slot[k]);
    }
    chain.pieces = 0;
    refill_.push_back(slot);
  }
  const auto n = static_cast<std::uint32_t>(refill_.size());
  if (n == 0) return;
  std::uint32_t index = 0;
  xsk_ring_prod__reserve(&fill, n, &index);  // n <= room entries are free: cannot fail
  for (std::uint32_t k = 0; k < n; ++k) {
    *xsk_ring_prod__fill_addr(&fill, index + k) = static_cast<std::uint64_t>(refill_[k])
                                                  << kFrameShift;
  }
  xsk_ring_prod__submit(&fill, n);
  if (xsk_ring_prod__needs_wakeup(&fill)) socket_.wake_up();
}

template <typename TakeFrame>
std::uint32_t XdpReceiver::for_each_frame(std::uint32_t want, TakeFrame&& take) {
  xsk_ring_cons& rx = socket_.rx();
  std::uint32_t index = 0;
  std::uint32_t n = xsk_ring_cons__peek(&rx, want, &index);
  if (n == 0) return 0;
  // The kernel publishes all buffers of a frame at once; a pass that stops inside a frame
  // takes the rest of it too.
  while ((xsk_ring_cons__rx_desc(&rx, index + n - 1)->options & XDP_PKT_CONTD) != 0) {
    std::uint32_t more = 0;
    if (xsk_ring_cons__peek(&rx, 1, &more) == 0) break;
    ++n;
  }
  std::uint32_t i = 0;
  while (i < n) {
    std::uint32_t last = i;
    while (last < n && (xsk_ring_cons__rx_desc(&rx, index + last)->options & XDP_PKT_CONTD) != 0) {
      ++last;
    }
    if (last == n) {  // an incomplete frame (cannot happen, see above): leave it for later
      xsk_ring_cons__cancel(&rx, n - i);
      n = i;
      break;
    }
    take(index + i, last - i + 1,
         last + 1 < n ? xsk_ring_cons__rx_desc(&rx, index + last + 1) : nullptr);
    i = last + 1;
  }
  xsk_ring_cons__release(&rx, n);
  return n;
}

void XdpReceiver::take_in_place(std::uint32_t first, std::uint32_t descs) {
  xsk_ring_cons& rx = socket_.rx();
  const xdp_desc& head = *xsk_ring_cons__rx_desc(&rx, first);
  const auto slot = static_cast<std::uint32_t>(head.addr >> kFrameShift);
  std::uint32_t frame_len = 0;
  for (std::uint32_t k = 0; k < descs; ++k)
    frame_len += xsk_ring_cons__rx_desc(&rx, first + k)->len;
  frames_.add();
  const std::span<const std::uint8_t> bytes(umem_ + head.addr, head.len);
  const ParsedFrame f = parse_frame(bytes, frame_len, filter_);
  bool pass = accept(f);
  if (pass && (descs > SlotChain::kMaxPieces || f.payload_offset > head.len)) {
    // Cannot happen: the kernel's limit, and headers in the first buffer.
    counters_.truncated.add();
    pass = false;
  }
  // A multi-buffer frame's payload in pieces: the head's after the headers, then each buffer.
  std::span<const std::uint8_t> payload;
  SlotChain* chain = nullptr;
  if (pass && descs > 1) {
    chain = &chains_[slot];
    std::uint32_t left = f.payload_size;
    for (std::uint32_t k = 0; k < descs; ++k) {
      const xdp_desc* d = xsk_ring_cons__rx_desc(&rx, first + k);
      const std::uint32_t skip = k == 0 ? f.payload_offset : 0;
      const std::uint32_t size = std::min(left, d->len - skip);
      chain->slot[k] = static_cast<std::uint32_t>(d->addr >> kFrameShift);
      chain->offset[k] = static_cast<std::uint16_t>((d->addr & ~kFrameMask) + skip);
      chain->size[k] = static_cast<std::uint16_t>(size);
      left -= size;
    }
    chain->pieces = descs;
    if (config_.verify_checksums) {  // only then does the receive thread read the payload
      std::size_t at = 0;
      for (std::uint32_t k = 0; k < descs; ++k) {
        std::memcpy(check_buffer_.data() + at, pool_.data(chain->slot[k]) + chain->offset[k],
                    chain->size[k]);
        at += chain->size[k];
      }
      payload = std::span<const std::uint8_t>(check_buffer_.data(), f.payload_size);
    }
  } else if (pass) {
    payload = bytes.subspan(f.payload_offset, f.payload_size);
  }
  if (pass && config_.verify_checksums && !udp_checksum_valid(bytes, f, payload)) {
    frame_errors_[static_cast<std::size_t>(FrameError::kUdpChecksum)]->add();
    pass = false;
  }
  if (!pass) {  // the frame's buffers are free again
    if (chain != nullptr) chain->pieces = 0;
    for (std::uint32_t k = 0; k < descs; ++k) {
      dispatch_.give_back(
          static_cast<std::uint32_t>(xsk_ring_cons__rx_desc(&rx, first + k)->addr >> kFrameShift));
    }
    return;
  }
  pool_.source(slot) = packet_source(f, ifindex_);
  const auto offset = static_cast<std::uint32_t>(head.addr & ~kFrameMask) + f.payload_offset;
  if (chain != nullptr) {
    dispatch_.stage_chained(slot, offset, chain->size[0], f.payload_size);
  } else {
    dispatch_.stage(slot, offset, f.payload_size);
  }
  counters_.packets.add();
  counters_.bytes.add(f.payload_size);
}

unsigned XdpReceiver::receive_in_place() {
  dispatch_.reclaim();
  refill();
  const std::uint32_t n = for_each_frame(
      config_.batch_size, [this](std::uint32_t first, std::uint32_t descs, const xdp_desc* next) {
        // The next frame's headers, written by the kernel on another core, load while this one
        // is parsed. The payload is not touched here: the processing thread reads it.
        if (next != nullptr) __builtin_prefetch(umem_ + next->addr);
        take_in_place(first, descs);
      });
  if (n != 0) dispatch_.push();
  return n;
}

unsigned XdpReceiver::receive_copy() {
  dispatch_.reclaim();
  const unsigned want =
      static_cast<unsigned>(std::min<std::size_t>(config_.batch_size, dispatch_.free_slots()));
  if (want == 0) {
    // Cannot happen with a pool sized by pool_slots_needed(); counted in case it ever does.
    counters_.no_free_slot.add();
    std::this_thread::yield();
    return 0;
  }
  used_frames_.clear();
  const std::uint32_t n =
      for_each_frame(want, [this](std::uint32_t first, std::uint32_t descs, const xdp_desc* next) {
        // The kernel wrote the frames on another core: load the next frame's first buffer while
        // this one is parsed and copied, so its cache misses overlap (measured: a third less
        // receive CPU per datagram at 64 and 1472 B; no change at 8972 B, which is
        // bandwidth-bound).
        if (next != nullptr) {
          for (std::uint32_t off = 0; off < next->len; off += 64) {
            __builtin_prefetch(umem_ + next->addr + off);
          }
        }
        take_frame(first, descs);
      });
  if (n == 0) return 0;

  // Every frame goes straight back to the kernel. The fill ring has room for all frames, so
  // this reservation always succeeds.
  xsk_ring_prod& fill = socket_.fill();
  const auto used = static_cast<std::uint32_t>(used_frames_.size());
  std::uint32_t fill_index = 0;
  if (used != 0 && xsk_ring_prod__reserve(&fill, used, &fill_index) == used) {
    for (std::uint32_t k = 0; k < used; ++k) {
      *xsk_ring_prod__fill_addr(&fill, fill_index + k) = used_frames_[k];
    }
    xsk_ring_prod__submit(&fill, used);
  }
  if (xsk_ring_prod__needs_wakeup(&fill)) socket_.wake_up();
  dispatch_.push();
  return n;
}

void XdpReceiver::wait_for_frames() {
  pollfd p{socket_.fd(), POLLIN, 0};
  poll(&p, 1, config_.idle_wait_ms);
}

void XdpReceiver::update_kernel_counters() {
  const XdpKernelCounters now = socket_.read_counters();
  const XdpKernelCounters& was = kernel_seen_;
  kernel_rx_dropped_.add(now.rx_dropped - was.rx_dropped);
  kernel_rx_ring_full_.add(now.rx_ring_full - was.rx_ring_full);
  kernel_invalid_descs_.add(now.rx_invalid_descs - was.rx_invalid_descs);
  kernel_fill_ring_empty_.add(now.fill_ring_empty - was.fill_ring_empty);
  counters_.dropped_kernel.add((now.rx_dropped - was.rx_dropped) +
                               (now.rx_ring_full - was.rx_ring_full));
  no_socket_.add(now.no_socket - was.no_socket);
  kernel_seen_ = now;
}

void XdpReceiver::run(const std::atomic<bool>& stop) {
  while (!stop.load(std::memory_order_relaxed)) {
    if (receive_batch() == 0) wait_for_frames();
    const std::uint64_t now = steady_now_ns();
    if (now >= next_counter_update_ns_) {
      update_kernel_counters();
      next_counter_update_ns_ = now + kCounterUpdateNs;
    }
  }
  // What the kernel has already delivered is received and counted, within a bound in case the
  // processing threads no longer give slots back.
  const std::uint64_t deadline = steady_now_ns() + kDrainAtStopNs;
  while (xsk_cons_nb_avail(&socket_.rx(), 1) != 0 && steady_now_ns() < deadline) receive_batch();
  update_kernel_counters();
}

}  // namespace efu::xdp
