// The UDP side of efu's generators (efu-udpgen, efu-multiblade-gen, efu-caen-gen): a connected
// socket to host:port (IPv4 or IPv6), datagrams queued in preallocated buffers and sent in
// batches with sendmmsg, each batch leaving when the Pacer says its first datagram is due.
// With a batch of 1 (the generators' --batch 1) every datagram is its own send call at its own
// time on the schedule: evenly spaced, one by one, as a detector's electronics send. A batched
// sender's bursts let a receiver sleep between them, which one-by-one traffic does not.
//
//   gen::PacketSender sender({.program = "efu-mygen", .host = "127.0.0.1", .port = 9000}, pacer);
//   std::uint8_t* p = sender.buffer();          // room for settings.max_size bytes
//   ... write a datagram of n bytes at p ...
//   if (!sender.commit(n)) return 1;            // false: a fatal send error (sender.error())
//   sender.flush();                             // at the end: send what is queued
//
// With `gso` on, consecutive datagrams of one size leave as one UDP GSO message (UDP_SEGMENT: the
// kernel cuts it into the datagrams), up to kMaxGsoSegments datagrams or kMaxGsoBytes bytes
// each, a shorter datagram closing a message; the receiver sees the same datagrams as without.
// On loopback this takes most of the per-datagram sending cost away, so the sender stops being
// the limit of a receive measurement.
//
// Transient send failures (ECONNREFUSED from an earlier datagram's ICMP error, ENOBUFS, EAGAIN,
// EINTR) are retried and counted in send_errors(); datagrams are counted once actually sent.
#pragma once

#include <sys/socket.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "efu/gen/pacer.h"

namespace efu::gen {

struct SenderSettings {
  std::string program = "efu-gen";  // prefixes warnings on stderr
  std::string host = "127.0.0.1";
  std::uint16_t port = 9000;
  int sndbuf = 0;                 // SO_SNDBUF request in bytes; 0: the kernel default
  unsigned batch = 64;            // datagrams per sendmmsg (1..kMaxSendBatch)
  std::uint32_t max_size = 8972;  // largest datagram
  bool gso = false;               // UDP GSO: many same-size datagrams per message (--gso)
};

/// The largest batch: sendmmsg() takes at most UIO_MAXIOV (1024) messages per call.
inline constexpr unsigned kMaxSendBatch = 1024;

/// The kernel's limits for one UDP GSO message: segments (UDP_MAX_SEGMENTS) and payload bytes
/// (the 64 KB IP datagram less the IPv4 and UDP headers).
inline constexpr unsigned kMaxGsoSegments = 64;
inline constexpr std::uint32_t kMaxGsoBytes = 65507;

class PacketSender {
 public:
  /// Resolves and connects. Throws ConfigError ("--host: ...") if that fails, or ("--gso: ...")
  /// if `gso` is on and the kernel has no UDP_SEGMENT. `stop`, if given,
  /// ends waits and retries early (a signal handler sets it).
  PacketSender(const SenderSettings& settings, const Pacer& pacer,
               const std::atomic<bool>* stop = nullptr);
  ~PacketSender();
  PacketSender(const PacketSender&) = delete;
  PacketSender& operator=(const PacketSender&) = delete;

  /// The buffer of the next datagram: settings.max_size bytes, valid until commit().
  std::uint8_t* buffer() noexcept { return buffers_.data() + queued_ * stride_; }
  /// Queues the datagram written at buffer(); sends the batch when it is full. Returns false
  /// after a fatal send error (see error()) or when stopped.
  bool commit(std::uint32_t size);
  /// Queues a copy of `size` bytes at `data`.
  bool send(const std::uint8_t* data, std::uint32_t size);
  /// Sends every queued datagram (paced). Returns false as commit() does.
  bool flush();

  std::uint64_t packets() const noexcept { return packets_; }
  std::uint64_t bytes() const noexcept { return bytes_; }
  std::uint64_t send_errors() const noexcept { return send_errors_; }
  /// Messages handed to the kernel: with gso, fewer than packets().
  std::uint64_t messages() const noexcept { return messages_; }
  /// sendmmsg() calls that sent something: packets() with a batch of 1, about packets() / batch
  /// otherwise.
  std::uint64_t send_calls() const noexcept { return send_calls_; }
  /// The fatal error that made commit()/flush() return false ("" if none, or stopped).
  const std::string& error() const noexcept { return error_; }
  int fd() const noexcept { return fd_; }
  /// The UDP source port the kernel gave the socket: how the receiver tells senders apart.
  std::uint16_t local_port() const noexcept;

 private:
  bool stopped() const noexcept {
    return stop_ != nullptr && stop_->load(std::memory_order_relaxed);
  }
  /// Builds msgs_ from the queued datagrams: one each, or GSO groups. Returns the message count.
  unsigned build_messages() noexcept;

  SenderSettings settings_;
  const Pacer& pacer_;
  const std::atomic<bool>* stop_;
  int fd_ = -1;
  std::size_t stride_;
  std::vector<std::uint8_t> buffers_;
  std::vector<iovec> iov_;
  std::vector<mmsghdr> msgs_;
  std::vector<unsigned> msg_datagrams_;  // per message: datagrams it carries
  std::vector<std::uint64_t> msg_bytes_;
  std::vector<std::uint8_t> control_;  // per message: room for one UDP_SEGMENT cmsg
  unsigned queued_ = 0;
  std::uint64_t messages_ = 0;
  std::uint64_t send_calls_ = 0;
  std::uint64_t packets_ = 0;
  std::uint64_t bytes_ = 0;
  std::uint64_t send_errors_ = 0;
  std::string error_;
};

}  // namespace efu::gen
