// receive_bench: packets/s and receive-thread CPU per packet through efu's receive path
// (recvmmsg -> efu::Receiver -> Lane ring -> no-op consumer thread that returns the slots),
// against a baseline that is the least a receiver can do (recvmmsg into the same kind of
// preallocated buffers, count, nothing else), in the same binary and the same run.
//
// Design:
//  - Per benchmark run: a UdpSocket on 127.0.0.1 port 0 (efu's own socket setup: SO_RCVBUF,
//    100 ms SO_RCVTIMEO) and a sender thread with its own socket that sendmmsg()s
//    batches of 64 datagrams of the payload size (Arg) as fast as it can, until the run is over.
//  - The benchmark thread is the receiver. Each iteration receives kPacketsPerIteration packets
//    (a batch may overshoot by < 64; the exact total is what is reported), bounded by
//    kIterationTimeout so a stalled sender cannot hang it. Loss needs no special handling:
//    packets the kernel drops are simply not received, and the sender keeps going until the
//    receiver has its count. Kernel drops are reported from the socket's SO_MEMINFO.
//  - On loopback the sender (which also does the kernel's delivery work in its own context) is
//    usually the bottleneck, so packets/s mostly measures the sender. The figure that isolates
//    the receiver is rx_cpu_ns_per_pkt: the receiving thread's CLOCK_THREAD_CPUTIME_ID over the
//    timed loop divided by the packets it received. pkts_per_call explains differences in it: a
//    receiver that outruns the sender gets smaller batches and pays more syscalls per packet.
//  - Neither path asks for control data (efu reads kernel drops with SO_MEMINFO off the receive
//    thread), so the kernel does the same work for both. drain/baseline_rxq_ovfl is the bare loop
//    with SO_RXQ_OVFL and control buffers, as efu's receiver was before: what that cost.
//  - drain/baseline_gro is the bare loop with UDP GRO (BaselineGroPath): the lowest CPU per
//    datagram any GRO receiver can reach here, against which efu's GRO path is read.
//  - Both pools are touched before timing, so page faults on first use are not measured.
//  - Streaming, the efu path's consumer thread naps when the ring is empty instead of spinning,
//    so on a 2-core machine it does not steal the sender's or the receiver's CPU. Draining (no
//    sender runs while the receiver is timed) it waits as efu's processing thread does: spin,
//    then sleep until the receiver's push wakes it; before each timed drain it is woken with
//    timing paused (NoopConsumer::prime), so the drain starts with it spinning, as a processing
//    thread is while datagrams keep coming. drain/efu_nosender_cold leaves it asleep: a burst
//    after an idle time, whose push must wake it. Its own CPU per packet is reported
//    separately (consumer_cpu_ns_per_pkt); it is not in rx_cpu_ns_per_pkt.
//  - Optional pinning: EFU_RX_CPUS=sender,receiver,consumer (e.g. 0,1,0).
//  - A second mode, drain/*, fills the socket queue with timing paused and times draining it:
//    full batches every call, so it gives the receive path's own cost and top rate, free of the
//    sender's speed and of wake-ups (see receive_drain()).
//  - Sizes and timing sanity: every datagram's length is checked against the payload size, and
//    the consumer checks that it saw every packet the receiver pushed. A mismatch fails the run.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <pthread.h>
#include <sched.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <benchmark/benchmark.h>
#include <spdlog/spdlog.h>

#include "bench_affinity.h"
#include "process/data_path.h"
#include "efu/counters.h"
#include "efu/cpu_relax.h"
#include "efu/packet_pool.h"
#include "receive/receiver.h"
#include "receive/udp_socket.h"
#include "process/wakeup.h"

namespace efu {
namespace {

constexpr unsigned kBatch = 64;
constexpr std::uint32_t kMaxDatagram = 9000;
constexpr std::size_t kRingCapacity = 4096;  // efu's default --ring-size
constexpr std::uint64_t kWarmupPackets = 16 * kBatch;
constexpr auto kIterationTimeout = std::chrono::seconds(10);
constexpr auto kSenderMaxRunTime = std::chrono::seconds(120);
constexpr int kSenderSndbuf = 4'000'000;
constexpr std::uint64_t kDrainBurstMax = 3000;  // < kRingCapacity
constexpr auto kConsumerNap = std::chrono::microseconds(100);
constexpr auto kProcessorSpin = std::chrono::microseconds(100);  // efu/process/processor.cpp kSpinNs
constexpr std::size_t kControlSpace = CMSG_SPACE(sizeof(std::uint32_t));

using Clock = std::chrono::steady_clock;

/// How the efu path's consumer waits when its ring is empty.
///  kNap: 100 us naps, never spinning (streaming: on 2 cores a spinning consumer would take the
///   sender's CPU, and the comparison would measure that).
///  kLikeProcessor: as efu's processing thread does (efu/process/processor.cpp): spin 100 us after work,
///   then sleep on the lane's Wakeup, which the receiver's push wakes (the drain's default: no
///   sender runs while the receiver is timed, so nothing is taken from anyone, and slots come
///   back as promptly as in efu).
///  kInline: no consumer thread; the receive thread empties the lane itself after each call
///   (drain/efu_inline: efu's receive code alone, no other core, the same slots every call).
enum class ConsumerWait { kNap, kLikeProcessor, kInline };

std::uint64_t thread_cpu_ns() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

/// CPUs from EFU_RX_CPUS="sender,receiver,consumer", or -1: leave it to the scheduler.
/// Pinning the sender and the receiver apart keeps every run in the same regime (cross-core
/// wake-ups); unpinned, the scheduler sometimes stacks them on one core and sometimes not.
struct Pinning {
  int sender = -1;
  int receiver = -1;
  int consumer = -1;
};

Pinning pinning_from_env() {
  const std::vector<int> cpus = bench::cpus_from_env("EFU_RX_CPUS", 3, "0,1,0");
  Pinning p;
  p.sender = cpus[0];
  p.receiver = cpus[1];
  p.consumer = cpus[2];
  return p;
}

using bench::AffinityGuard;
using bench::pin_current_thread;

/// A UDP socket connect()ed to 127.0.0.1:port, with a send buffer big enough for a batch.
int connected_sender_socket(int port) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error(std::string("sender socket(): ") + std::strerror(errno));
  setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &kSenderSndbuf, sizeof(kSenderSndbuf));
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<std::uint16_t>(port));
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&to), sizeof(to)) != 0) {
    const int err = errno;
    ::close(fd);
    throw std::runtime_error(std::string("sender connect(): ") + std::strerror(err));
  }
  return fd;
}

/// Sends `payload`-byte datagrams to 127.0.0.1:port with sendmmsg() until stopped or until
/// kSenderMaxRunTime has passed.
class LoopbackSender {
 public:
  LoopbackSender(int port, std::size_t payload, int cpu)
      : payload_(payload, std::uint8_t{0xa5}), cpu_(cpu), fd_(connected_sender_socket(port)) {
    thread_ = std::thread([this] { run(); });
  }
  ~LoopbackSender() {
    stop();
    ::close(fd_);
  }
  LoopbackSender(const LoopbackSender&) = delete;
  LoopbackSender& operator=(const LoopbackSender&) = delete;

  void stop() {
    stop_.store(true, std::memory_order_relaxed);
    if (thread_.joinable()) thread_.join();
  }
  std::uint64_t sent() const noexcept { return sent_.load(std::memory_order_relaxed); }

 private:
  void run() {
    pin_current_thread(cpu_);
    // Every datagram carries the same bytes: the receive side under test never looks at them.
    iovec iov{payload_.data(), payload_.size()};
    std::vector<mmsghdr> messages(kBatch);
    for (mmsghdr& m : messages) {
      m.msg_hdr = msghdr{};
      m.msg_hdr.msg_iov = &iov;
      m.msg_hdr.msg_iovlen = 1;
    }
    const Clock::time_point deadline = Clock::now() + kSenderMaxRunTime;
    std::uint64_t sent = 0;
    while (!stop_.load(std::memory_order_relaxed) && Clock::now() < deadline) {
      const int n = sendmmsg(fd_, messages.data(), kBatch, 0);
      if (n > 0) {
        sent += static_cast<std::uint64_t>(n);
        sent_.store(sent, std::memory_order_relaxed);
      } else {
        std::this_thread::yield();  // ENOBUFS and the like: let the receiver catch up
      }
    }
  }

  std::vector<std::uint8_t> payload_;
  int cpu_;
  int fd_ = -1;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> sent_{0};
  std::thread thread_;
};

UdpSocketConfig loopback_socket_config(bool gro = false) {
  UdpSocketConfig config;
  config.bind_address = "127.0.0.1";
  config.port = 0;
  config.gro = gro;
  return config;
}

/// Datagrams per UDP GSO send: at most 64 (the kernel's segment limit) and 64 KB in all.
unsigned gso_segments(std::size_t payload) {
  return static_cast<unsigned>(std::min<std::size_t>(64, 65000 / payload));
}

/// Sends `count` datagrams of `payload` bytes from `fd` (connected) as UDP GSO buffers of up to
/// gso_segments(payload) datagrams each. Returns how many datagrams went out.
std::uint64_t send_gso(int fd, std::vector<std::uint8_t>& buffer, std::size_t payload,
                       std::uint64_t count) {
  const unsigned per_send = gso_segments(payload);
  if (buffer.size() < per_send * payload) buffer.assign(per_send * payload, std::uint8_t{0x5a});
  char control[CMSG_SPACE(sizeof(std::uint16_t))] = {};
  std::uint64_t sent = 0;
  while (sent < count) {
    const auto n = static_cast<unsigned>(std::min<std::uint64_t>(per_send, count - sent));
    iovec iov{buffer.data(), n * payload};
    msghdr h{};
    h.msg_iov = &iov;
    h.msg_iovlen = 1;
    if (n > 1) {
      h.msg_control = control;
      h.msg_controllen = sizeof(control);
      cmsghdr* c = CMSG_FIRSTHDR(&h);
      c->cmsg_level = SOL_UDP;
      c->cmsg_type = UDP_SEGMENT;
      c->cmsg_len = CMSG_LEN(sizeof(std::uint16_t));
      const auto segment = static_cast<std::uint16_t>(payload);
      std::memcpy(CMSG_DATA(c), &segment, sizeof(segment));
    }
    if (sendmsg(fd, &h, 0) < 0) break;
    sent += n;
  }
  return sent;
}

void touch(PacketPool& pool) { std::memset(pool.data(0), 0, pool.slots() * pool.slot_size()); }

/// What every run reports, whichever path it measures.
struct RunTotals {
  std::uint64_t packets = 0;    // counted in the timed loop
  std::uint64_t calls = 0;      // recvmmsg() / receive_batch() calls in the timed loop
  std::uint64_t rx_cpu_ns = 0;  // receiving thread, timed part only
  std::uint64_t kernel_drops = 0;
  bool stalled = false;
};

void report(benchmark::State& state, const RunTotals& t, std::size_t payload, std::uint64_t sent,
            std::size_t granted_rcvbuf) {
  state.SetItemsProcessed(static_cast<std::int64_t>(t.packets));
  state.SetBytesProcessed(static_cast<std::int64_t>(t.packets * payload));
  const double packets = t.packets == 0 ? 1.0 : static_cast<double>(t.packets);
  state.counters["rx_cpu_ns_per_pkt"] = static_cast<double>(t.rx_cpu_ns) / packets;
  state.counters["pkts_per_call"] =
      static_cast<double>(t.packets) / static_cast<double>(t.calls == 0 ? 1 : t.calls);
  state.counters["kernel_drops"] = static_cast<double>(t.kernel_drops);
  state.counters["sent"] = static_cast<double>(sent);
  state.counters["rcvbuf"] = static_cast<double>(granted_rcvbuf);
  if (t.stalled) state.SkipWithError("no packets for the iteration time limit: sender stalled?");
}

/// Receives until `target` packets or the iteration timeout.
template <typename Path>
bool receive_packets(std::uint64_t target, Path& path, RunTotals& totals) {
  const Clock::time_point deadline = Clock::now() + kIterationTimeout;
  std::uint64_t got = 0;
  while (got < target) {
    got += path.receive_batch();
    ++totals.calls;
    if (Clock::now() > deadline) {
      totals.packets += got;
      return false;
    }
  }
  totals.packets += got;
  return true;
}

/// A socket's kernel drop count (SO_MEMINFO; in efu the stats thread polls it for the counter),
/// 0 if unreadable. Every path reports its drops from it, read outside the timed part.
std::uint64_t socket_drops(int fd) {
  return static_cast<std::uint64_t>(std::max<std::int64_t>(0, socket_kernel_drops(fd)));
}

// ---- baseline: recvmmsg only -------------------------------------------------------------------

/// What the bare loops share: their socket, the payload size every datagram must have, and
/// what they report besides their counts.
class BareLoop {
 public:
  std::uint64_t kernel_drops() const { return socket_drops(fd_); }

  void prime() {}  // no consumer to wake

  /// After the timed part: path-specific checks.
  void finish(benchmark::State& state) {
    if (wrong_size_ != 0) state.SkipWithError("a datagram had the wrong size");
  }

 protected:
  BareLoop(int fd, std::size_t payload) : fd_(fd), payload_(payload) {}

  int fd_;
  std::size_t payload_;
  std::uint64_t wrong_size_ = 0;
};

/// Variants tell where efu's extra receive cost goes (drain/baseline_name, _cycle*):
///  kName: also ask for each sender's address (msg_name), as efu's receiver does for a plugin
///   that reads it.
///  kSlots: the buffers it receives into. More than one batch (kBatch): into the next slots of
///   that many, round robin, instead of the same 64 every call: the memory footprint of handing
///   slots to another thread and getting them back later, without the hand-off itself.
///  kRxqOvfl: the socket has SO_RXQ_OVFL and every message a control buffer for its drop count
///   (efu's receiver until it read drops with SO_MEMINFO instead).
template <bool kName, std::size_t kSlots = kBatch, bool kRxqOvfl = false>
class BaselinePathT : public BareLoop {
  static constexpr bool kCycle = kSlots > kBatch;

 public:
  static constexpr bool kGroSocket = false;
  BaselinePathT(int fd, std::size_t payload, const Pinning& /*pins*/,
                ConsumerWait /*no consumer*/ = ConsumerWait::kNap)
      : BareLoop(fd, payload),
        pool_(kSlots, kMaxDatagram),
        messages_(kBatch),
        iovecs_(kBatch),
        control_(kRxqOvfl ? kBatch * kControlSpace : 0) {
    // Same buffers as efu's receiver: slots of a PacketPool with the same slot size. One batch
    // of slots, reused every call: the least any receiver can do.
    touch(pool_);
    if (kRxqOvfl) {
      const int one = 1;
      if (setsockopt(fd_, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one)) != 0) {
        throw std::runtime_error(std::string("setsockopt(SO_RXQ_OVFL): ") + std::strerror(errno));
      }
    }
    for (unsigned i = 0; i < kBatch; ++i) {
      iovecs_[i] = iovec{pool_.data(i), kMaxDatagram};
      messages_[i].msg_hdr = msghdr{};
      messages_[i].msg_hdr.msg_iov = &iovecs_[i];
      messages_[i].msg_hdr.msg_iovlen = 1;
      if (kRxqOvfl) {
        messages_[i].msg_hdr.msg_control = control_.data() + i * kControlSpace;
        messages_[i].msg_hdr.msg_controllen = kControlSpace;
      }
      if (kName) messages_[i].msg_hdr.msg_name = &pool_.source(i).v6;
    }
  }

  std::uint64_t receive_batch() noexcept {
    // The kernel writes back msg_controllen (and msg_namelen): give the used headers their
    // space again.
    for (unsigned i = 0; i < last_n_; ++i) {
      if (kRxqOvfl) messages_[i].msg_hdr.msg_controllen = kControlSpace;
      if (kName) messages_[i].msg_hdr.msg_namelen = sizeof(sockaddr_in6);
    }
    if (kCycle) {
      next_ = (next_ + last_n_) % static_cast<std::uint32_t>(pool_.slots() - kBatch + 1);
      for (unsigned i = 0; i < kBatch; ++i) {
        iovecs_[i].iov_base = pool_.data(next_ + i);
        if (kName) messages_[i].msg_hdr.msg_name = &pool_.source(next_ + i).v6;
      }
    }
    const int n = recvmmsg(fd_, messages_.data(), kBatch, MSG_WAITFORONE, nullptr);
    if (n <= 0) {
      last_n_ = 0;
      return 0;
    }
    last_n_ = static_cast<unsigned>(n);
    for (int i = 0; i < n; ++i) wrong_size_ += messages_[i].msg_len != payload_;
    if (kRxqOvfl) {
      // The drop count is cumulative per socket: the last datagram's value is enough. Read as
      // efu's receiver read it (the figure reported comes from kernel_drops()).
      msghdr& h = messages_[last_n_ - 1].msg_hdr;
      for (cmsghdr* c = CMSG_FIRSTHDR(&h); c != nullptr; c = CMSG_NXTHDR(&h, c)) {
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL) {
          std::memcpy(&rxq_ovfl_drops_, CMSG_DATA(c), sizeof(rxq_ovfl_drops_));
        }
      }
    }
    return last_n_;
  }

 private:
  PacketPool pool_;
  std::vector<mmsghdr> messages_;
  std::vector<iovec> iovecs_;
  std::vector<std::uint8_t> control_;
  unsigned last_n_ = kBatch;
  std::uint32_t next_ = 0;  // kCycle: the first slot of this call's batch
  std::uint32_t rxq_ovfl_drops_ = 0;
};

using BaselinePath = BaselinePathT<false>;
using BaselineRxqOvflPath = BaselinePathT<false, kBatch, true>;
using BaselineNamePath = BaselinePathT<true>;
// As many slots as efu's pool for one processing thread has.
using BaselineNameCyclePath =
    BaselinePathT<true, pool_slots_needed(1, kRingCapacity, kBatch, kBatch) / kBatch * kBatch>;
// The bare loop writing 128 or 256 slots in turn (2 or 4 of its batches) instead of 64: how the
// kernel's copy slows once the slots written between two uses of one no longer fit the cache.
using BaselineCycle2Path = BaselinePathT<false, 2 * kBatch>;
using BaselineCycle4Path = BaselinePathT<false, 4 * kBatch>;

/// The least a UDP GRO receiver can do: a socket with UDP_GRO, recvmmsg into 64 KB buffers,
/// each message's segment size read from its control data, its datagrams counted and their
/// sizes checked, nothing else: no hand-off, no per-datagram view, the same first buffers every
/// call. Each call asks for as many messages as efu's receiver would (its default --batch-bytes
/// at the last call's mean message size), so both pay the same syscalls. For 9 KB datagrams the
/// cost is mostly the kernel's copy of the payload: this is the lowest CPU per datagram that any
/// GRO receiver, efu's included, can reach on this machine (drain/baseline_gro against
/// drain/baseline, both fed by the same GSO sender).
class BaselineGroPath : public BareLoop {
 public:
  static constexpr bool kGroSocket = true;
  BaselineGroPath(int fd, std::size_t payload, const Pinning& /*pins*/,
                  ConsumerWait /*no consumer*/ = ConsumerWait::kNap)
      : BareLoop(fd, payload),
        pool_(kBatch, kGroSlotSize),
        messages_(kBatch),
        iovecs_(kBatch),
        control_(kBatch * kControlSpace) {
    touch(pool_);
    for (unsigned i = 0; i < kBatch; ++i) {
      iovecs_[i] = iovec{pool_.data(i), kGroSlotSize};
      messages_[i].msg_hdr = msghdr{};
      messages_[i].msg_hdr.msg_iov = &iovecs_[i];
      messages_[i].msg_hdr.msg_iovlen = 1;
      messages_[i].msg_hdr.msg_control = control_.data() + i * kControlSpace;
    }
  }

  std::uint64_t receive_batch() noexcept {
    for (unsigned i = 0; i < want_; ++i) messages_[i].msg_hdr.msg_controllen = kControlSpace;
    const int n = recvmmsg(fd_, messages_.data(), want_, MSG_WAITFORONE, nullptr);
    if (n <= 0) return 0;
    std::uint64_t datagrams = 0;
    std::uint64_t bytes = 0;
    for (int i = 0; i < n; ++i) {
      const std::uint32_t size = messages_[i].msg_len;
      bytes += size;
      const std::uint32_t segment = Receiver::gro_segment_size(messages_[i].msg_hdr);
      if (segment == 0 || size <= segment) {  // one datagram, not coalesced
        wrong_size_ += size != payload_;
        ++datagrams;
        continue;
      }
      // Every datagram of the burst has the payload's size, so a coalesced buffer is a whole
      // number of them.
      wrong_size_ += segment != payload_ || size % segment != 0;
      datagrams += (size + segment - 1) / segment;
    }
    // efu's receiver's rule, with its default --batch-bytes.
    want_ = messages_within_budget(ReceiverConfig{}.batch_bytes, bytes, static_cast<unsigned>(n),
                                   kBatch);
    return datagrams;
  }

 private:
  PacketPool pool_;
  std::vector<mmsghdr> messages_;
  std::vector<iovec> iovecs_;
  std::vector<std::uint8_t> control_;
  unsigned want_ = kBatch;  // messages the next call asks for
};

// ---- efu: Receiver -> Lane -> no-op consumer ---------------------------------------------------

/// The processing thread with nothing to process: pops PacketRefs, hands the slots back. With
/// ConsumerWait::kInline there is no thread, and the receive thread calls take_all().
class NoopConsumer {
 public:
  NoopConsumer(Lane& lane, std::uint32_t payload, int cpu, ConsumerWait wait)
      : lane_(lane), payload_(payload), cpu_(cpu), wait_(wait) {
    if (wait_ == ConsumerWait::kLikeProcessor) lane_.wakeup = &wakeup_;
    if (wait_ != ConsumerWait::kInline) thread_ = std::thread([this] { run(); });
  }
  ~NoopConsumer() { stop(); }
  NoopConsumer(const NoopConsumer&) = delete;
  NoopConsumer& operator=(const NoopConsumer&) = delete;

  /// Called after the receiver stopped: drains the lane, then ends the thread.
  void stop() {
    input_done_.store(true, std::memory_order_release);
    if (thread_.joinable()) thread_.join();
  }
  std::uint64_t packets() const noexcept { return packets_; }
  std::uint64_t wrong_size() const noexcept { return wrong_size_; }
  std::uint64_t lost_returns() const noexcept { return lost_returns_; }
  std::uint64_t cpu_ns() const noexcept { return cpu_ns_; }

  /// Drain, with timing paused: wakes the consumer if it sleeps and has it spin again, as a
  /// processing thread does while datagrams keep coming (its spin outlasts the gap between
  /// two receive calls), so the timed drain does not start with a wake-up; returns once the
  /// consumer has seen it. The drain/*_cold variants skip this: their bursts find it asleep.
  void prime() {
    if (wait_ != ConsumerWait::kLikeProcessor) return;
    primed_.store(true, std::memory_order_release);
    wakeup_.notify();
    const Clock::time_point deadline = Clock::now() + std::chrono::seconds(1);
    while (primed_.load(std::memory_order_acquire) && Clock::now() < deadline) {
      std::this_thread::yield();
    }
  }

  /// kInline, on the receive thread: takes everything in the lane and hands the slots back.
  void take_all() noexcept {
    PacketRef refs[kBatch];
    std::size_t n = 0;
    while ((n = lane_.packets.pop_bulk(std::span<PacketRef>(refs))) != 0) take(refs, n);
  }

 private:
  /// Checks the sizes of `n` popped datagrams and gives their slots back.
  void take(const PacketRef* refs, std::size_t n) noexcept {
    std::uint32_t slots[kBatch];
    std::size_t freed = 0;
    for (std::size_t i = 0; i < n; ++i) {
      // With UDP GRO several datagrams share a slot: it goes back with its last one.
      if (release_segment(*lane_.pool, refs[i].slot)) slots[freed++] = refs[i].slot;
      wrong_size_ += refs[i].size != payload_;
    }
    // The return ring holds every slot of the pool, so this never comes back short.
    const std::size_t returned =
        lane_.returned.push_bulk(std::span<const std::uint32_t>(slots, freed));
    lost_returns_ += freed - returned;
    packets_ += n;
  }

  void run() {
    pin_current_thread(cpu_);
    const std::uint64_t cpu_start = thread_cpu_ns();
    const Clock::time_point deadline = Clock::now() + kSenderMaxRunTime;
    PacketRef refs[kBatch];
    Clock::time_point spin_until{};  // kLikeProcessor: after work, spin until then
    unsigned empty_polls = 0;
    while (true) {
      const std::size_t n = lane_.packets.pop_bulk(std::span<PacketRef>(refs));
      if (n == 0) {
        // Read the flag before the final emptiness check: the receiver pushes before it sets it.
        if (input_done_.load(std::memory_order_acquire) && lane_.packets.empty()) break;
        const Clock::time_point now = Clock::now();
        if (now > deadline) break;
        if (wait_ == ConsumerWait::kNap) {
          // No spinning: on a 2-core machine a spinning (or often waking) consumer takes CPU
          // from the sender and the receiver and the comparison would measure that, not the
          // receive path. A 100 us nap lets the ring fill with at most a few hundred packets at
          // loopback rates, far below its 4096, and the consumer then drains it in bulk.
          std::this_thread::sleep_for(kConsumerNap);
          continue;
        }
        if (empty_polls++ == 0 && spin_until == Clock::time_point{}) {
          spin_until = now + kProcessorSpin;
        }
        if (primed_.load(std::memory_order_acquire)) {  // prime(): spin as after work
          spin_until = now + kProcessorSpin;
          primed_.store(false, std::memory_order_release);
        }
        if (now < spin_until) {
          // As efu's processing thread spins (efu/process/processor.cpp): a pause between polls, a
          // yield every 64.
          if (empty_polls % 64 == 0) {
            std::this_thread::yield();
          } else {
            cpu_relax();
          }
          continue;
        }
        wakeup_.sleep(1'000'000, [&] {
          return !lane_.packets.empty() || input_done_.load(std::memory_order_acquire) ||
                 primed_.load(std::memory_order_acquire);
        });
        continue;
      }
      empty_polls = 0;
      spin_until = Clock::time_point{};
      take(refs, n);
    }
    cpu_ns_ = thread_cpu_ns() - cpu_start;
  }

  Lane& lane_;
  std::uint32_t payload_;
  int cpu_;
  ConsumerWait wait_;
  Wakeup wakeup_;
  std::atomic<bool> input_done_{false};
  std::atomic<bool> primed_{false};
  // Written by the consumer thread (or, kInline, the receive thread), read after join(): no
  // atomics needed.
  std::uint64_t packets_ = 0;
  std::uint64_t wrong_size_ = 0;
  std::uint64_t lost_returns_ = 0;
  std::uint64_t cpu_ns_ = 0;
  std::thread thread_;
};

/// `batch_bytes`: efu's --batch-bytes; by default efu's default.
ReceiverConfig receiver_config(bool gro, bool sender = true,
                               std::uint32_t batch_bytes = ReceiverConfig{}.batch_bytes) {
  ReceiverConfig config;
  config.batch_size = kBatch;
  config.batch_bytes = batch_bytes;
  config.max_datagram = kMaxDatagram;
  config.gro = gro;
  config.sender = sender;
  return config;
}

/// efu's receive path; with kGro the socket has UDP_GRO and the receiver splits coalesced
/// buffers (efu --gro on). kSender: the kernel is asked for each datagram's sender, as for a
/// plugin with uses_source (the udp instrument); without it, as for the ESS detector plugins.
/// kByteBudget: efu's default --batch-bytes; without it --batch-bytes 0 (64 datagrams per call
/// whatever their size, as before it existed).
template <bool kGro, bool kSender = true, bool kByteBudget = true>
class EfuPathT {
 public:
  static constexpr bool kGroSocket = kGro;
  // Pool and ring sized as efu's runner does for one processing thread.
  EfuPathT(int fd, std::size_t payload, const Pinning& pins, ConsumerWait wait = ConsumerWait::kNap)
      : fd_(fd),
        pool_(pool_slots_needed(1, kRingCapacity, kBatch, kBatch),
              receive_slot_size(receiver_config(kGro))),
        lane_(kRingCapacity, pool_),
        receiver_(fd,
                  receiver_config(kGro, kSender, kByteBudget ? ReceiverConfig{}.batch_bytes : 0),
                  pool_, {&lane_}, nullptr, counters_),
        consumer_(lane_, static_cast<std::uint32_t>(payload), pins.consumer, wait),
        inline_(wait == ConsumerWait::kInline) {
    touch(pool_);  // the consumer has nothing to read yet: no race on the slots
    counters_.freeze();
  }

  /// Before a timed drain (see NoopConsumer::prime).
  void prime() { consumer_.prime(); }

  /// Datagrams received by one receive_batch() call.
  std::uint64_t receive_batch() {
    const std::uint64_t before = receiver_.own_counters().packets;
    receiver_.receive_batch();
    if (inline_) consumer_.take_all();
    return receiver_.own_counters().packets - before;
  }
  std::uint64_t kernel_drops() const { return socket_drops(fd_); }

  void finish(benchmark::State& state) {
    consumer_.stop();
    const std::uint64_t accepted = counters_.value("receive.packets");
    const std::uint64_t ring_full = counters_.value("receive.dropped.ring_full");
    state.counters["ring_full_drops"] = static_cast<double>(ring_full);
    state.counters["consumer_cpu_ns_per_pkt"] =
        static_cast<double>(consumer_.cpu_ns()) /
        static_cast<double>(consumer_.packets() == 0 ? 1 : consumer_.packets());
    if (consumer_.wrong_size() != 0 || counters_.value("receive.truncated") != 0) {
      state.SkipWithError("a datagram had the wrong size");
    } else if (consumer_.packets() + ring_full != accepted || consumer_.lost_returns() != 0) {
      state.SkipWithError("the consumer did not see every packet the receiver accepted");
    }
  }

 private:
  int fd_;
  CounterRegistry counters_;
  PacketPool pool_;
  Lane lane_;
  Receiver receiver_;
  NoopConsumer consumer_;
  bool inline_;  // ConsumerWait::kInline: the receive thread empties the lane after each call
};

using EfuPath = EfuPathT<false>;
using EfuNoSenderPath = EfuPathT<false, false>;
using EfuNoSenderUnboundedPath = EfuPathT<false, false, false>;
using EfuGroPath = EfuPathT<true>;
using EfuGroUnboundedPath = EfuPathT<true, true, false>;
using EfuGroNoSenderPath = EfuPathT<true, false>;

// ---- the two ways of driving a path
// --------------------------------------------------------------

/// Streaming: a sender thread sends flat out; each iteration receives a fixed packet count.
template <typename Path>
void receive_stream(benchmark::State& state) {
  const std::size_t payload = static_cast<std::size_t>(state.range(0));
  const std::uint64_t per_iteration = static_cast<std::uint64_t>(state.range(1));
  const Pinning pins = pinning_from_env();
  AffinityGuard affinity;
  pin_current_thread(pins.receiver);
  UdpSocket socket(loopback_socket_config());
  Path path(socket.fd(), payload, pins);

  LoopbackSender sender(socket.bound_port(), payload, pins.sender);
  RunTotals warmup;
  RunTotals totals;
  totals.stalled = !receive_packets(kWarmupPackets, path, warmup);
  const std::uint64_t drops_before = path.kernel_drops();
  const std::uint64_t cpu_before = thread_cpu_ns();
  for (auto _ : state) {
    if (totals.stalled || !receive_packets(per_iteration, path, totals)) {
      totals.stalled = true;
      break;
    }
  }
  totals.rx_cpu_ns = thread_cpu_ns() - cpu_before;
  sender.stop();
  totals.kernel_drops = path.kernel_drops() - drops_before;
  report(state, totals, payload, sender.sent(), socket.granted_rcvbuf());
  path.finish(state);
}

/// Drain: with timing paused, fill the socket's receive queue with a burst; then time draining
/// it with a non-blocking socket. Every call finds a full queue, so this measures what the
/// receive path costs and how fast it can go with full batches, independent of the sender and
/// of wake-ups. The burst stays below the ring capacity, so the efu path cannot drop on a full
/// ring even if its consumer does not run during the drain. The efu path's consumer waits as
/// efu's processing thread does (no sender competes for the CPU while the drain is timed).
template <typename Path, ConsumerWait kWait = ConsumerWait::kLikeProcessor, bool kPrime = true>
void receive_drain(benchmark::State& state) {
  const std::size_t payload = static_cast<std::size_t>(state.range(0));
  const bool gso = state.range(1) != 0;  // the burst is sent as UDP GSO buffers
  const Pinning pins = pinning_from_env();
  AffinityGuard affinity;
  pin_current_thread(pins.receiver);
  UdpSocket socket(loopback_socket_config(Path::kGroSocket));
  ::fcntl(socket.fd(), F_SETFL, ::fcntl(socket.fd(), F_GETFL) | O_NONBLOCK);
  Path path(socket.fd(), payload, pins, kWait);

  // Enough to fill most of the granted buffer (the kernel charges more than the payload per
  // datagram, so the excess is dropped and reported), never more than the ring can hold.
  const std::uint64_t burst =
      std::min<std::uint64_t>(kDrainBurstMax, socket.granted_rcvbuf() / payload);
  const int tx = connected_sender_socket(socket.bound_port());
  std::vector<std::uint8_t> bytes(payload, std::uint8_t{0x5a});
  iovec iov{bytes.data(), bytes.size()};
  std::vector<mmsghdr> messages(kBatch);
  for (mmsghdr& m : messages) {
    m.msg_hdr = msghdr{};
    m.msg_hdr.msg_iov = &iov;
    m.msg_hdr.msg_iovlen = 1;
  }

  std::vector<std::uint8_t> gso_buffer;
  RunTotals totals;
  std::uint64_t sent = 0;
  const std::uint64_t drops_before = path.kernel_drops();
  for (auto _ : state) {
    state.PauseTiming();
    if (gso) sent += send_gso(tx, gso_buffer, payload, burst);
    for (std::uint64_t done = gso ? burst : 0; done < burst;) {
      const unsigned want = static_cast<unsigned>(std::min<std::uint64_t>(kBatch, burst - done));
      const int n = sendmmsg(tx, messages.data(), want, 0);
      if (n <= 0) break;  // counted below as a stall if nothing arrives
      done += static_cast<std::uint64_t>(n);
      sent += static_cast<std::uint64_t>(n);
    }
    if (kPrime) path.prime();
    state.ResumeTiming();
    const std::uint64_t cpu_before = thread_cpu_ns();
    std::uint64_t got = 0;
    for (std::uint64_t n = 1; n != 0;) {  // ends on the first empty (EAGAIN) call
      n = path.receive_batch();
      got += n;
      ++totals.calls;
    }
    totals.rx_cpu_ns += thread_cpu_ns() - cpu_before;
    totals.packets += got;
    if (got == 0) {
      totals.stalled = true;
      break;
    }
  }
  ::close(tx);
  totals.kernel_drops = path.kernel_drops() - drops_before;
  report(state, totals, payload, sent, socket.granted_rcvbuf());
  path.finish(state);
}

/// Several receive threads (efu --receive-threads N): N sockets on one port with SO_REUSEPORT,
/// each drained by its own thread through efu's receive path. With timing paused, 16 flows
/// (distinct source ports, which the kernel spreads over the sockets) send a burst; then all
/// threads drain at once and the iteration ends when the last one is done. Items/s is the
/// aggregate rate; compare threads=2 with threads=1 in the same run.
void receive_drain_threads(benchmark::State& state) {
  const std::size_t payload = static_cast<std::size_t>(state.range(0));
  const auto threads = static_cast<unsigned>(state.range(1));
  constexpr unsigned kFlows = 16;
  const Pinning pins = pinning_from_env();
  AffinityGuard affinity;

  std::deque<UdpSocket> sockets;
  UdpSocketConfig config = loopback_socket_config();
  config.reuse_port = true;
  for (unsigned t = 0; t < threads; ++t) {
    sockets.emplace_back(config);
    config.port = sockets.front().bound_port();
    ::fcntl(sockets.back().fd(), F_SETFL, ::fcntl(sockets.back().fd(), F_GETFL) | O_NONBLOCK);
  }
  std::deque<EfuPath> paths;
  for (unsigned t = 0; t < threads; ++t) paths.emplace_back(sockets[t].fd(), payload, pins);
  // The total stays within what one socket can hold, so threads=1 drops nothing either.
  const std::uint64_t burst =
      std::min<std::uint64_t>(kDrainBurstMax, sockets.front().granted_rcvbuf() / payload);
  std::vector<int> senders;
  for (unsigned f = 0; f < kFlows; ++f) senders.push_back(connected_sender_socket(config.port));
  std::vector<std::uint8_t> bytes(payload, std::uint8_t{0x5a});

  std::barrier start(threads + 1);
  std::barrier done(threads + 1);
  std::atomic<bool> quit{false};
  std::vector<std::uint64_t> got(threads, 0);
  std::vector<std::uint64_t> cpu(threads, 0);
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      for (;;) {
        start.arrive_and_wait();
        if (quit.load(std::memory_order_relaxed)) return;
        const std::uint64_t cpu_before = thread_cpu_ns();
        for (std::uint64_t n = 1; n != 0;) {
          n = paths[t].receive_batch();
          got[t] += n;
        }
        cpu[t] += thread_cpu_ns() - cpu_before;
        done.arrive_and_wait();
      }
    });
  }
  std::uint64_t sent = 0;
  for (auto _ : state) {
    state.PauseTiming();
    for (std::uint64_t i = 0; i < burst; ++i) {
      if (::send(senders[i % kFlows], bytes.data(), bytes.size(), 0) > 0) ++sent;
    }
    state.ResumeTiming();
    start.arrive_and_wait();
    done.arrive_and_wait();
  }
  quit.store(true, std::memory_order_relaxed);
  start.arrive_and_wait();
  for (std::thread& w : workers) w.join();
  for (const int fd : senders) ::close(fd);

  RunTotals totals;
  std::uint64_t cpu_total = 0;
  for (unsigned t = 0; t < threads; ++t) {
    totals.packets += got[t];
    totals.kernel_drops += paths[t].kernel_drops();
    cpu_total += cpu[t];
    state.counters["share_rx" + std::to_string(t)] =
        static_cast<double>(got[t]) / static_cast<double>(sent == 0 ? 1 : sent);
  }
  totals.rx_cpu_ns = cpu_total;
  totals.calls = 1;
  report(state, totals, payload, sent, sockets.front().granted_rcvbuf());
  for (EfuPath& p : paths) p.finish(state);
}

void register_all() {
  // Streaming {payload bytes, packets per iteration}: ~0.1-0.5 s per iteration at loopback rates.
  const auto add_stream = [](const char* name, void (*fn)(benchmark::State&)) {
    benchmark::RegisterBenchmark(name, fn)
        ->ArgNames({"payload", "pkts"})
        ->Args({64, 100'000})
        ->Args({8972, 25'000})
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  };
  add_stream("receive/baseline", receive_stream<BaselinePath>);
  add_stream("receive/efu", receive_stream<EfuPath>);
  // Drain {payload bytes, burst sent with UDP GSO}: the plain path against the bare receiver,
  // and UDP GRO (efu --gro on) against the bare receiver without GRO, both fed by a GSO sender.
  const auto add_drain = [](const char* name, void (*fn)(benchmark::State&), bool with_gso) {
    auto* b = benchmark::RegisterBenchmark(name, fn)->ArgNames({"payload", "gso"});
    b->Args({64, 0})->Args({1472, 0})->Args({8972, 0});
    if (with_gso) b->Args({64, 1})->Args({1472, 1})->Args({8972, 1});
    b->UseRealTime()->Unit(benchmark::kMicrosecond);
  };
  add_drain("drain/baseline", receive_drain<BaselinePath>, true);
  add_drain("drain/efu", receive_drain<EfuPath>, false);
  // A plugin with uses_source = false (the ESS detector families): no sender per datagram.
  add_drain("drain/efu_nosender", receive_drain<EfuNoSenderPath>, false);
  // The same with --batch-bytes 0: 64 datagrams per call whatever their size.
  add_drain("drain/efu_nosender_unbounded", receive_drain<EfuNoSenderUnboundedPath>, false);
  // The same with a consumer that naps 100 us instead of spinning and sleeping on the wake-up:
  // slots come back late, so the receiver writes more of them in turn.
  add_drain("drain/efu_nosender_nap", receive_drain<EfuNoSenderPath, ConsumerWait::kNap>, false);
  // efu's receive code alone: the lane emptied on the receive thread, no hand-off.
  add_drain("drain/efu_inline", receive_drain<EfuNoSenderPath, ConsumerWait::kInline>, false);
  // The same with the consumer asleep when each burst starts (it sleeps while the next burst is
  // sent): the receive thread's push then wakes it, and the first calls of the burst write
  // slots it has not given back yet. The cost of a burst after an idle time.
  add_drain("drain/efu_nosender_cold",
            receive_drain<EfuNoSenderPath, ConsumerWait::kLikeProcessor, false>, false);
  // Where the plain path's extra cost goes: the sender's address (a bare loop that asks for it
  // too), that plus cycling through a pool as large as efu's, and the bare loop writing 2 or 4
  // batches of slots in turn (see BaselinePathT).
  add_drain("drain/baseline_name", receive_drain<BaselineNamePath>, false);
  add_drain("drain/baseline_name_cycle", receive_drain<BaselineNameCyclePath>, false);
  add_drain("drain/baseline_cycle2", receive_drain<BaselineCycle2Path>, false);
  add_drain("drain/baseline_cycle4", receive_drain<BaselineCycle4Path>, false);
  // The bare loop with SO_RXQ_OVFL and a control buffer per message: the kernel work efu's
  // receiver did for its drop count before it read SO_MEMINFO instead.
  add_drain("drain/baseline_rxq_ovfl", receive_drain<BaselineRxqOvflPath>, false);
  benchmark::RegisterBenchmark("drain_threads/efu", receive_drain_threads)
      ->ArgNames({"payload", "threads"})
      ->Args({64, 1})
      ->Args({64, 2})
      ->Args({8972, 1})
      ->Args({8972, 2})
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
  // UDP GRO: the bare GRO loop (the least any GRO receiver can do; see BaselineGroPath), efu
  // with its default --batch-bytes, without asking for senders, and with --batch-bytes 0.
  for (const auto& [name, fn] :
       {std::pair{"drain/baseline_gro", &receive_drain<BaselineGroPath>},
        std::pair{"drain/efu_gro", &receive_drain<EfuGroPath>},
        // A plugin with uses_source = false (the ESS detector families) with --gro on.
        std::pair{"drain/efu_gro_nosender", &receive_drain<EfuGroNoSenderPath>},
        std::pair{"drain/efu_gro_unbounded", &receive_drain<EfuGroUnboundedPath>}}) {
    benchmark::RegisterBenchmark(name, fn)
        ->ArgNames({"payload", "gso"})
        ->Args({64, 1})
        ->Args({1472, 1})
        ->Args({8972, 1})
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
  }
}

}  // namespace
}  // namespace efu

int main(int argc, char** argv) {
  // The socket logs its setup (and a capped SO_RCVBUF, reported here as the rcvbuf counter) on
  // every run; only errors are of interest here.
  spdlog::set_level(spdlog::level::err);
  efu::register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
