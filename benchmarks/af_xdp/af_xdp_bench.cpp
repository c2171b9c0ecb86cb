// af_xdp_bench: datagrams per receive core, AF_XDP against recvmmsg, on one veth pair in the
// same run. benchmarks/af_xdp/run makes the namespaces and the veth pair and runs this inside
// the receiving namespace; the sender thread moves itself into the sending one (setns).
//
// Four receivers, each measured the same way:
//   recvmmsg      the least a socket receiver does: recvmmsg() of 64 into buffers, count;
//   efu-socket    efu's socket backend: UdpSocket + Receiver + lane + a consumer thread;
//   xdp-bare      the least an AF_XDP receiver does: count frames, give them back, no parse;
//   xdp-parse     xdp-bare plus parsing each frame's headers: the receive thread's part if the
//                 pipelines read payloads straight from UMEM frames (no copy into the pool);
//   efu-af_xdp    efu's af_xdp backend as it runs by default (--xdp-in-place on): XdpSocket +
//                 XdpReceiver (parse; the UMEM frames themselves go to the lane, a jumbo
//                 datagram as a chain of its frames, which the consumer gathers as efu's
//                 processing thread does) + lane + consumer;
//   efu-af_xdp-copy  the same, copying each payload into a pool slot (--xdp-in-place off).
// Two modes:
//   drain   the sender queues N datagrams while the receiver waits, then the receiver takes
//           them as fast as it can: its thread's CPU time and wall time per datagram. This is
//           the receive core's own limit, free of the sender's speed (one core sends here).
//           The sender's CPU time covers sendmmsg() and the kernel's delivery (veth, XDP and
//           the copy to the AF_XDP socket, or the UDP socket's queue), which run in its context.
//   stream  the sender sends as fast as it can for S seconds while the receiver runs as in
//           production (blocking recvmmsg; AF_XDP: poll() when the ring is empty): CPU time of
//           the receive thread per datagram received, and the sender thread's CPU time (on veth
//           the kernel's receive work, XDP included, runs there in softirq).
// "Datagrams/s per receive core" is 1e9 / (receive thread CPU ns per datagram).
//
//   af_xdp_bench --interface IF --tx-netns NS --dst ADDR [--port 9000] [--sizes 64,1472,8972]
//                [--drain-datagrams 4096] [--repeats 40] [--stream-seconds 2] [--json FILE]
// Pinning: EFU_XDP_BENCH_CPUS=sender,receiver,consumer (default 0,1,0).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>

#include "receive/af_xdp/xdp_receiver.h"
#include "receive/af_xdp/xdp_socket.h"
#include "bench_affinity.h"
#include "process/data_path.h"
#include "efu/counters.h"
#include "efu/errors.h"
#include "efu/packet_pool.h"
#include "receive/receiver.h"
#include "receive/udp_socket.h"

#ifndef XDP_PKT_CONTD
#define XDP_PKT_CONTD (1 << 0)
#endif

namespace efu {
namespace {

using Clock = std::chrono::steady_clock;
constexpr unsigned kBatch = 64;
constexpr std::uint32_t kMaxDatagram = 9000;
constexpr std::size_t kRingCapacity = 4096;
constexpr int kSocketBuffer = 256 << 20;     // holds a whole drain batch of jumbo datagrams
constexpr unsigned kXdpFrames = 16384;       // 4096 jumbo datagrams of 3 frames each fit
constexpr unsigned kXdpInPlaceRing = 16384;  // in place: a drain batch of jumbo frames
constexpr auto kSettle = std::chrono::milliseconds(5);

struct Options {
  std::string interface;
  std::string tx_netns;
  std::string dst;
  int port = 9000;
  std::vector<std::size_t> sizes{64, 1472, 8972};
  unsigned drain_datagrams = 4096;
  unsigned repeats = 40;
  double stream_seconds = 2;
  std::string json;
  std::vector<std::string> paths{"recvmmsg",  "efu-socket", "xdp-bare",
                                 "xdp-parse", "efu-af_xdp", "efu-af_xdp-copy"};
  std::vector<std::string> modes{"drain", "stream"};
  int sender_cpu = 0, receiver_cpu = 1, consumer_cpu = 0;
};

std::uint64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

std::uint64_t wall_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
          .count());
}

// UDP RcvbufErrors of this network namespace: kernel drops of the socket receivers.
std::uint64_t udp_rcvbuf_errors() {
  std::ifstream in("/proc/net/snmp");
  std::string line, header;
  while (std::getline(in, line)) {
    if (line.rfind("Udp: ", 0) != 0) continue;
    if (header.empty()) {
      header = line;
      continue;
    }
    std::istringstream h(header), v(line);
    std::string name, value;
    while (h >> name && v >> value) {
      if (name == "RcvbufErrors") return std::stoull(value);
    }
  }
  return 0;
}

// ---- sender ---------------------------------------------------------------------------------

/// A thread in the sending namespace: sends `count` datagrams (or streams until stopped).
class Sender {
 public:
  Sender(const Options& o, std::size_t size) : o_(o), payload_(size, 0xA5) {}

  /// Sends exactly `count` datagrams (retrying on ENOBUFS); returns when all are handed over.
  void send(std::uint64_t count) { run(count, false); }
  /// Sends until stop(); returns the sender thread's CPU ns and datagrams sent.
  void start_stream() {
    stop_.store(false);
    thread_ = std::thread([this] { body(0, true); });
  }
  void stop() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
  }
  std::uint64_t sent() const { return sent_; }
  std::uint64_t cpu_ns() const { return cpu_ns_; }

 private:
  void run(std::uint64_t count, bool stream) {
    thread_ = std::thread([this, count, stream] { body(count, stream); });
    thread_.join();
  }
  void body(std::uint64_t count, bool stream) {
    bench::pin_current_thread(o_.sender_cpu);
    const int ns = open(("/run/netns/" + o_.tx_netns).c_str(), O_RDONLY | O_CLOEXEC);
    if (ns < 0 || setns(ns, CLONE_NEWNET) != 0) {
      std::fprintf(stderr, "af_xdp_bench: cannot enter netns %s: %s\n", o_.tx_netns.c_str(),
                   std::strerror(errno));
      std::exit(2);
    }
    close(ns);
    addrinfo hints{};
    hints.ai_socktype = SOCK_DGRAM;
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
    addrinfo* to = nullptr;
    if (getaddrinfo(o_.dst.c_str(), std::to_string(o_.port).c_str(), &hints, &to) != 0) {
      std::fprintf(stderr, "af_xdp_bench: --dst %s is not an address\n", o_.dst.c_str());
      std::exit(2);
    }
    const int fd = socket(to->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    const int sndbuf = 16 << 20;
    setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof(sndbuf));
    if (connect(fd, to->ai_addr, to->ai_addrlen) != 0) {
      std::fprintf(stderr, "af_xdp_bench: connect: %s\n", std::strerror(errno));
      std::exit(2);
    }
    freeaddrinfo(to);
    iovec iov{payload_.data(), payload_.size()};
    std::vector<mmsghdr> msgs(kBatch);
    for (mmsghdr& m : msgs) {
      m.msg_hdr = msghdr{};
      m.msg_hdr.msg_iov = &iov;
      m.msg_hdr.msg_iovlen = 1;
    }
    const std::uint64_t cpu0 = thread_cpu_ns();
    std::uint64_t sent = 0;
    while (stream ? !stop_.load(std::memory_order_relaxed) : sent < count) {
      const unsigned n =
          stream ? kBatch : static_cast<unsigned>(std::min<std::uint64_t>(kBatch, count - sent));
      const int r = sendmmsg(fd, msgs.data(), n, 0);
      if (r > 0) {
        sent += static_cast<std::uint64_t>(r);
      } else {
        std::this_thread::yield();
      }
    }
    cpu_ns_ = thread_cpu_ns() - cpu0;
    sent_ = sent;
    close(fd);
  }

  const Options& o_;
  std::vector<std::uint8_t> payload_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::uint64_t sent_ = 0;
  std::uint64_t cpu_ns_ = 0;
};

// ---- receivers ------------------------------------------------------------------------------

class Path {
 public:
  virtual ~Path() = default;
  virtual const char* name() const = 0;
  /// Takes what is queued without waiting; false when nothing was queued.
  virtual bool drain_once() = 0;
  /// One production-style step: may wait for traffic.
  virtual void receive_or_wait() = 0;
  /// Datagrams taken so far.
  virtual std::uint64_t taken() = 0;
  virtual std::uint64_t kernel_drops() = 0;
};

/// A consumer thread for efu's lane: returns every slot, naps when the ring is empty. A chained
/// datagram (af_xdp in place, jumbo) is gathered into a buffer first, as efu's processing thread
/// does, so the receive thread shares the machine's memory bandwidth as it does in efu.
class Consumer {
 public:
  Consumer(Lane& lane, int cpu) : lane_(lane) {
    thread_ = std::thread([this, cpu] {
      bench::pin_current_thread(cpu);
      PacketRef refs[256];
      std::uint32_t slots[256];
      std::vector<std::uint8_t> gathered(65536);
      while (!stop_.load(std::memory_order_relaxed)) {
        const std::size_t n = lane_.packets.pop_bulk(std::span(refs));
        if (n == 0) {
          std::this_thread::sleep_for(std::chrono::microseconds(100));
          continue;
        }
        for (std::size_t i = 0; i < n; ++i) {
          slots[i] = refs[i].slot;
          if (lane_.chains != nullptr && (refs[i].offset & kChainedOffset) != 0) {
            const SlotChain& c = lane_.chains[refs[i].slot];
            std::size_t at = 0;
            for (std::uint32_t k = 0; k < c.pieces; ++k) {
              std::memcpy(gathered.data() + at, lane_.pool->data(c.slot[k]) + c.offset[k],
                          c.size[k]);
              at += c.size[k];
            }
          }
        }
        lane_.returned.push_bulk(std::span<const std::uint32_t>(slots, n));
      }
    });
  }
  ~Consumer() {
    stop_.store(true);
    thread_.join();
  }

 private:
  Lane& lane_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

void set_nonblocking(int fd, bool on) {
  const int flags = fcntl(fd, F_GETFL);
  fcntl(fd, F_SETFL, on ? (flags | O_NONBLOCK) : (flags & ~O_NONBLOCK));
}

UdpSocketConfig socket_config(const Options& o) {
  UdpSocketConfig c;
  c.bind_address = o.dst.find(':') == std::string::npos ? "0.0.0.0" : "::";
  c.port = o.port;
  c.receive_timeout_ms = 100;
  return c;
}

void force_rcvbuf(int fd) {
  setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &kSocketBuffer, sizeof(kSocketBuffer));
}

class RecvmmsgPath final : public Path {
 public:
  explicit RecvmmsgPath(const Options& o)
      : socket_(socket_config(o)), buffers_(kBatch * kMaxDatagram), msgs_(kBatch), iov_(kBatch) {
    force_rcvbuf(socket_.fd());
    for (unsigned i = 0; i < kBatch; ++i) {
      iov_[i] = iovec{buffers_.data() + i * kMaxDatagram, kMaxDatagram};
      msgs_[i].msg_hdr = msghdr{};
      msgs_[i].msg_hdr.msg_iov = &iov_[i];
      msgs_[i].msg_hdr.msg_iovlen = 1;
    }
    drops0_ = udp_rcvbuf_errors();
  }
  const char* name() const override { return "recvmmsg"; }
  bool drain_once() override { return call(MSG_DONTWAIT); }
  void receive_or_wait() override { call(MSG_WAITFORONE); }
  std::uint64_t taken() override { return taken_; }
  std::uint64_t kernel_drops() override { return udp_rcvbuf_errors() - drops0_; }

 private:
  bool call(int flags) {
    const int n = recvmmsg(socket_.fd(), msgs_.data(), kBatch, flags, nullptr);
    if (n <= 0) return false;
    taken_ += static_cast<std::uint64_t>(n);
    return true;
  }
  std::uint64_t taken_ = 0;
  UdpSocket socket_;
  std::vector<std::uint8_t> buffers_;
  std::vector<mmsghdr> msgs_;
  std::vector<iovec> iov_;
  std::uint64_t drops0_ = 0;
};

constexpr std::size_t kPoolSlots = pool_slots_needed(1, kRingCapacity, kBatch, kBatch);

/// efu's pool, lane and consumer, shared by the efu paths. With `umem` (af_xdp in place) the
/// pool is that socket's UMEM.
struct EfuDataPath {
  explicit EfuDataPath(int consumer_cpu, xdp::XdpSocket* umem = nullptr)
      : pool(umem != nullptr
                 ? PacketPool(umem->umem_frames(), xdp::XdpSocket::kFrameSize, umem->umem())
                 : PacketPool(kPoolSlots, kMaxDatagram)),
        lane(kRingCapacity, pool) {
    std::memset(pool.data(0), 0, pool.slots() * pool.slot_size());  // no page faults when timed
    consumer = std::make_unique<Consumer>(lane, consumer_cpu);
  }
  CounterRegistry counters;
  PacketPool pool;
  Lane lane;
  std::unique_ptr<Consumer> consumer;
};

class EfuSocketPath final : public Path {
 public:
  explicit EfuSocketPath(const Options& o)
      : socket_(socket_config(o)),
        data_(o.consumer_cpu),
        receiver_(socket_.fd(), ReceiverConfig{kBatch, kMaxDatagram}, data_.pool, {&data_.lane},
                  nullptr, data_.counters) {
    force_rcvbuf(socket_.fd());
    drops0_ = udp_rcvbuf_errors();
  }
  ~EfuSocketPath() override { data_.consumer.reset(); }
  const char* name() const override { return "efu-socket"; }
  bool drain_once() override {
    blocking(false);
    return step();
  }
  void receive_or_wait() override {
    blocking(true);
    step();
  }
  std::uint64_t taken() override { return taken_; }
  std::uint64_t kernel_drops() override { return udp_rcvbuf_errors() - drops0_; }

 private:
  // Production blocks in recvmmsg() up to the socket's receive timeout; a drain must not.
  void blocking(bool on) {
    if (on == blocking_) return;
    set_nonblocking(socket_.fd(), !on);
    blocking_ = on;
  }
  bool step() {
    const unsigned n = receiver_.receive_batch();
    taken_ += n;
    return n != 0;
  }
  bool blocking_ = true;
  std::uint64_t taken_ = 0;
  UdpSocket socket_;
  EfuDataPath data_;
  Receiver receiver_;
  std::uint64_t drops0_ = 0;
};

xdp::XdpSocketConfig xdp_config(const Options& o, bool in_place = false) {
  xdp::XdpSocketConfig c;
  c.interface = o.interface;
  c.port = o.port;
  c.frames = kXdpFrames;
  c.bind_address = o.dst;
  if (in_place) {  // as efu's runner sets it up: the UMEM is the pool
    c.frames = kXdpInPlaceRing;
    c.umem_frames =
        static_cast<unsigned>(c.frames + kPoolSlots * xdp::frames_per_datagram(kMaxDatagram));
    c.prefill = false;
  }
  return c;
}

/// xdp-bare, and with `parse` xdp-parse: also parses each frame's headers (what the receive
/// thread would still do if the pipelines read payloads straight from UMEM frames).
class XdpBarePath final : public Path {
 public:
  XdpBarePath(const Options& o, bool parse)
      : socket_(xdp_config(o)), addrs_(kBatch * 17), parse_(parse) {}
  const char* name() const override { return parse_ ? "xdp-parse" : "xdp-bare"; }
  bool drain_once() override { return take(); }
  void receive_or_wait() override {
    if (!take()) {
      pollfd p{socket_.fd(), POLLIN, 0};
      poll(&p, 1, 100);
    }
  }
  std::uint64_t taken() override { return taken_; }
  std::uint64_t kernel_drops() override {
    const xdp::XdpKernelCounters c = socket_.read_counters();
    return c.rx_dropped + c.rx_ring_full;
  }

 private:
  // Counts datagrams (last buffers of frames) and gives every buffer straight back.
  bool take() {
    std::uint32_t index = 0;
    const std::uint32_t n = xsk_ring_cons__peek(&socket_.rx(), kBatch, &index);
    if (n == 0) return false;
    std::uint64_t& datagrams = taken_;
    for (std::uint32_t i = 0; i < n; ++i) {
      const xdp_desc* d = xsk_ring_cons__rx_desc(&socket_.rx(), index + i);
      addrs_[i] = d->addr & ~static_cast<std::uint64_t>(xdp::XdpSocket::kFrameSize - 1);
      if (parse_ && !in_frame_) {
        const std::span<const std::uint8_t> head(socket_.umem() + d->addr, d->len);
        payload_bytes_ += xdp::parse_frame(head, 65535, socket_.filter()).payload_size;
      }
      in_frame_ = (d->options & XDP_PKT_CONTD) != 0;
      if (!in_frame_) ++datagrams;
    }
    xsk_ring_cons__release(&socket_.rx(), n);
    std::uint32_t fill = 0;
    if (xsk_ring_prod__reserve(&socket_.fill(), n, &fill) == n) {
      for (std::uint32_t i = 0; i < n; ++i)
        *xsk_ring_prod__fill_addr(&socket_.fill(), fill + i) = addrs_[i];
      xsk_ring_prod__submit(&socket_.fill(), n);
    }
    return true;
  }
  std::uint64_t taken_ = 0;
  xdp::XdpSocket socket_;
  std::vector<std::uint64_t> addrs_;
  bool parse_;
  bool in_frame_ = false;
  std::uint64_t payload_bytes_ = 0;
};

/// efu's af_xdp backend: in place (the UMEM frames go to the lane) or copying each payload into
/// a pool slot.
class EfuXdpPath final : public Path {
 public:
  EfuXdpPath(const Options& o, const char* name, bool in_place)
      : name_(name),
        socket_(xdp_config(o, in_place)),
        data_(o.consumer_cpu, in_place ? &socket_ : nullptr),
        receiver_(socket_, xdp::XdpReceiverConfig{kBatch, kMaxDatagram, false, 100, in_place},
                  data_.pool, {&data_.lane}, nullptr, data_.counters) {}
  ~EfuXdpPath() override { data_.consumer.reset(); }
  const char* name() const override { return name_; }
  bool drain_once() override { return receiver_.receive_batch() != 0; }
  void receive_or_wait() override {
    if (receiver_.receive_batch() == 0) receiver_.wait_for_frames();
  }
  // efu's own counter, read outside the timed loops.
  std::uint64_t taken() override { return data_.counters.value("receive.packets"); }
  std::uint64_t kernel_drops() override {
    receiver_.update_kernel_counters();
    return data_.counters.value("receive.dropped.kernel");
  }

 private:
  const char* name_;
  xdp::XdpSocket socket_;
  EfuDataPath data_;
  xdp::XdpReceiver receiver_;
};

// ---- measurement ----------------------------------------------------------------------------

struct Result {
  std::string mode, path;
  std::size_t size = 0;
  std::uint64_t datagrams = 0, sent = 0, kernel_drops = 0;
  std::uint64_t rx_cpu_ns = 0, wall_ns = 0, sender_cpu_ns = 0;
  double rx_cpu_ns_per_dgram() const { return datagrams ? double(rx_cpu_ns) / datagrams : 0; }
  double per_core_rate() const { return rx_cpu_ns ? 1e9 * datagrams / double(rx_cpu_ns) : 0; }
  double wall_rate() const { return wall_ns ? 1e9 * datagrams / double(wall_ns) : 0; }
};

Result drain(const Options& o, Path& path, std::size_t size) {
  Result r{"drain", path.name(), size};
  Sender sender(o, size);
  // Warm-up: one untimed round, so first-touch and cache effects are not measured.
  for (unsigned rep = 0; rep <= o.repeats; ++rep) {
    while (path.drain_once()) {
    }
    sender.send(o.drain_datagrams);
    std::this_thread::sleep_for(kSettle);
    const std::uint64_t before = path.taken();
    const std::uint64_t cpu0 = thread_cpu_ns(), wall0 = wall_ns();
    while (path.drain_once()) {
    }
    const std::uint64_t cpu = thread_cpu_ns() - cpu0, wall = wall_ns() - wall0;
    const std::uint64_t got = path.taken() - before;
    if (rep == 0) continue;
    r.sender_cpu_ns += sender.cpu_ns();
    r.datagrams += got;
    r.sent += o.drain_datagrams;
    r.rx_cpu_ns += cpu;
    r.wall_ns += wall;
  }
  r.kernel_drops = path.kernel_drops();
  return r;
}

Result stream(const Options& o, Path& path, std::size_t size) {
  Result r{"stream", path.name(), size};
  Sender sender(o, size);
  while (path.drain_once()) {
  }
  const std::uint64_t drops0 = path.kernel_drops();
  sender.start_stream();
  const std::uint64_t warm = wall_ns() + 200'000'000;
  while (wall_ns() < warm) path.receive_or_wait();
  const std::uint64_t before = path.taken();
  const std::uint64_t cpu0 = thread_cpu_ns(), wall0 = wall_ns();
  const std::uint64_t end = wall0 + static_cast<std::uint64_t>(o.stream_seconds * 1e9);
  while (wall_ns() < end) path.receive_or_wait();
  r.rx_cpu_ns = thread_cpu_ns() - cpu0;
  r.wall_ns = wall_ns() - wall0;
  r.datagrams = path.taken() - before;
  sender.stop();
  r.sent = sender.sent();
  r.sender_cpu_ns = sender.cpu_ns();
  r.kernel_drops = path.kernel_drops() - drops0;
  return r;
}

std::unique_ptr<Path> make_path_once(const Options& o, const std::string& name) {
  if (name == "recvmmsg") return std::make_unique<RecvmmsgPath>(o);
  if (name == "efu-socket") return std::make_unique<EfuSocketPath>(o);
  if (name == "xdp-bare") return std::make_unique<XdpBarePath>(o, false);
  if (name == "xdp-parse") return std::make_unique<XdpBarePath>(o, true);
  if (name == "efu-af_xdp") return std::make_unique<EfuXdpPath>(o, "efu-af_xdp", true);
  if (name == "efu-af_xdp-copy") return std::make_unique<EfuXdpPath>(o, "efu-af_xdp-copy", false);
  throw std::runtime_error("--paths: '" + name +
                           "' is not a receiver; expected recvmmsg, efu-socket, xdp-bare, "
                           "xdp-parse, efu-af_xdp, efu-af_xdp-copy");
}

/// The kernel releases a closed AF_XDP socket's queue a little later (deferred work), so the
/// path after an AF_XDP one may find the queue still taken: try again for up to 2 s.
std::unique_ptr<Path> make_path(const Options& o, const std::string& name) {
  for (int attempt = 1;; ++attempt) {
    try {
      return make_path_once(o, name);
    } catch (const efu::ConfigError& e) {
      if (attempt == 20 ||
          std::string(e.what()).find("already has an AF_XDP socket") == std::string::npos) {
        throw;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
}

std::string json_line(const Result& r) {
  char buf[512];
  std::snprintf(
      buf, sizeof(buf),
      "{\"mode\":\"%s\",\"path\":\"%s\",\"size\":%zu,\"datagrams\":%llu,\"sent\":%llu,"
      "\"kernel_drops\":%llu,\"rx_cpu_ns\":%llu,\"wall_ns\":%llu,\"sender_cpu_ns\":%llu,"
      "\"rx_cpu_ns_per_datagram\":%.1f,\"datagrams_per_s_per_rx_core\":%.0f,"
      "\"datagrams_per_s_wall\":%.0f}",
      r.mode.c_str(), r.path.c_str(), r.size, static_cast<unsigned long long>(r.datagrams),
      static_cast<unsigned long long>(r.sent), static_cast<unsigned long long>(r.kernel_drops),
      static_cast<unsigned long long>(r.rx_cpu_ns), static_cast<unsigned long long>(r.wall_ns),
      static_cast<unsigned long long>(r.sender_cpu_ns), r.rx_cpu_ns_per_dgram(), r.per_core_rate(),
      r.wall_rate());
  return buf;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "af_xdp_bench: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--interface")
      o.interface = value();
    else if (a == "--tx-netns")
      o.tx_netns = value();
    else if (a == "--dst")
      o.dst = value();
    else if (a == "--port")
      o.port = std::stoi(value());
    else if (a == "--drain-datagrams")
      o.drain_datagrams = static_cast<unsigned>(std::stoul(value()));
    else if (a == "--repeats")
      o.repeats = static_cast<unsigned>(std::stoul(value()));
    else if (a == "--stream-seconds")
      o.stream_seconds = std::stod(value());
    else if (a == "--json")
      o.json = value();
    else if (a == "--sizes") {
      o.sizes.clear();
      std::stringstream s(value());
      for (std::string item; std::getline(s, item, ',');) o.sizes.push_back(std::stoul(item));
    } else if (a == "--paths" || a == "--modes") {
      std::vector<std::string>& list = a == "--paths" ? o.paths : o.modes;
      list.clear();
      std::stringstream s(value());
      for (std::string item; std::getline(s, item, ',');) list.push_back(item);
    } else {
      std::fprintf(stderr, "af_xdp_bench: unknown argument '%s'\n", a.c_str());
      std::exit(2);
    }
  }
  if (o.interface.empty() || o.tx_netns.empty() || o.dst.empty()) {
    std::fprintf(stderr, "af_xdp_bench: --interface, --tx-netns and --dst are required\n");
    std::exit(2);
  }
  const std::vector<int> cpus = bench::cpus_from_env("EFU_XDP_BENCH_CPUS", 3, "0,1,0");
  if (cpus[0] >= 0) {
    o.sender_cpu = cpus[0];
    o.receiver_cpu = cpus[1];
    o.consumer_cpu = cpus[2];
  }
  return o;
}

}  // namespace
}  // namespace efu

int main(int argc, char** argv) {
  using namespace efu;
  spdlog::set_level(spdlog::level::warn);
  const Options o = parse(argc, argv);
  bench::pin_current_thread(o.receiver_cpu);
  std::vector<Result> results;
  try {
    for (const std::size_t size : o.sizes) {
      for (const std::string& name : o.paths) {
        std::unique_ptr<Path> path = make_path(o, name);
        for (const std::string& mode : o.modes) {
          const Result r = mode == "drain" ? drain(o, *path, size) : stream(o, *path, size);
          std::printf(
              "%-6s %-15s %5zu B: %8.1f ns/datagram rx CPU, %6.2f M/s per rx core, "
              "%6.2f M/s wall, sender %6.1f ns/datagram, kernel drops %llu of %llu\n",
              r.mode.c_str(), r.path.c_str(), r.size, r.rx_cpu_ns_per_dgram(),
              r.per_core_rate() / 1e6, r.wall_rate() / 1e6,
              r.sent ? double(r.sender_cpu_ns) / r.sent : 0.0,
              static_cast<unsigned long long>(r.kernel_drops),
              static_cast<unsigned long long>(r.sent));
          std::fflush(stdout);
          results.push_back(r);
        }
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "af_xdp_bench: %s\n", e.what());
    return 2;
  }
  if (!o.json.empty()) {
    std::ofstream out(o.json);
    out << "[\n";
    for (std::size_t i = 0; i < results.size(); ++i) {
      out << "  " << json_line(results[i]) << (i + 1 < results.size() ? ",\n" : "\n");
    }
    out << "]\n";
  }
  return 0;
}
