// The af_xdp backend's kernel side: efu's XDP program on an interface and an AF_XDP socket on one
// of its receive queues, with the UMEM, fill and rx rings (libxdp), and the kernel's counters.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include <xdp/xsk.h>

#include "receive/af_xdp/frame_parser.h"
#include "receive/af_xdp/xdp_program.h"

namespace efu::xdp {

enum class AttachMode { kAuto, kNative, kGeneric };
enum class BindMode { kAuto, kZeroCopy, kCopy };

struct XdpSocketConfig {
  std::string interface;
  unsigned queue = 0;
  AttachMode attach = AttachMode::kAuto;  // auto: native (driver) XDP, else generic (skb)
  BindMode bind = BindMode::kAuto;        // auto: zero-copy, else copy
  unsigned frames = 4096;                 // the fill and rx ring sizes (a power of two)
  unsigned umem_frames = 0;               // UMEM frames, >= frames; 0: as many as `frames`
  bool prefill = true;  // the first `frames` frames go on the fill ring; else the user fills it
  int port = 9000;
  std::string bind_address = "0.0.0.0";  // any IPv4 (0.0.0.0), any IPv4/IPv6 (::), or one address
};

/// Parses the option texts; throws ConfigError naming the option and the accepted values.
AttachMode parse_attach_mode(const std::string& text);
BindMode parse_bind_mode(const std::string& text);

/// The kernel's counters for the socket (XDP_STATISTICS) and efu's XDP program, cumulative.
struct XdpKernelCounters {
  std::uint64_t rx_dropped = 0;        // no fill buffer, or a frame too large for the socket
  std::uint64_t rx_ring_full = 0;      // the rx ring was full
  std::uint64_t rx_invalid_descs = 0;  // bad descriptors efu put on the fill ring (a bug)
  std::uint64_t fill_ring_empty = 0;   // times the kernel found the fill ring empty
  std::uint64_t no_socket = 0;         // efu's datagrams on a queue without efu's socket
};

/// Owns the UMEM, the AF_XDP socket, efu's XDP program and its attachment. The program is
/// attached through a BPF link, so it is detached when efu exits, also when it crashes. Throws
/// ConfigError with one line naming what is missing (capability, interface, queue, kernel
/// support) when any step fails.
class XdpSocket {
 public:
  /// A UMEM frame: a page, the largest the kernel allows. The kernel writes a frame's bytes
  /// after its 256 B headroom (XDP_PACKET_HEADROOM), so one holds kFrameData bytes of a frame.
  static constexpr std::uint32_t kFrameSize = 4096;
  static constexpr std::uint32_t kFrameData = kFrameSize - 256;

  explicit XdpSocket(const XdpSocketConfig& config);
  ~XdpSocket();
  XdpSocket(const XdpSocket&) = delete;
  XdpSocket& operator=(const XdpSocket&) = delete;

  int fd() const noexcept { return fd_; }
  unsigned ifindex() const noexcept { return static_cast<unsigned>(ifindex_); }
  std::uint8_t* umem() const noexcept { return umem_area_; }
  unsigned frames() const noexcept { return frames_; }  // the fill and rx ring sizes
  unsigned umem_frames() const noexcept { return umem_frames_; }
  bool zero_copy() const noexcept { return zero_copy_; }
  bool native() const noexcept { return native_; }
  bool multi_buffer() const noexcept { return multi_buffer_; }
  /// The largest frame one UMEM frame holds (after the kernel's headroom); larger frames need
  /// multi_buffer().
  std::uint32_t frame_capacity() const noexcept { return frame_capacity_; }
  /// Which datagrams are efu's, for the frame parser (the XDP program applies the same).
  const FrameFilter& filter() const noexcept { return filter_; }

  // The rings, used only by the receive thread.
  xsk_ring_cons& rx() noexcept { return rx_; }
  xsk_ring_prod& fill() noexcept { return fill_; }

  /// Reads the kernel's counters (one getsockopt; the program's counters are mapped memory).
  XdpKernelCounters read_counters() const;

  /// Asks the kernel to refill from the fill ring (zero-copy drivers that sleep); one syscall.
  void wake_up() const;

 private:
  void create_umem(const XdpSocketConfig& config);
  void create_socket(const XdpSocketConfig& config);
  void load_program(const XdpSocketConfig& config);
  void attach_program(const XdpSocketConfig& config);
  void release() noexcept;

  int ifindex_ = 0;
  unsigned frames_ = 0;
  unsigned umem_frames_ = 0;
  std::uint8_t* umem_area_ = nullptr;
  std::size_t umem_bytes_ = 0;
  xsk_umem* umem_ = nullptr;
  xsk_socket* xsk_ = nullptr;
  xsk_ring_prod fill_{};
  xsk_ring_cons completion_{};
  xsk_ring_cons rx_{};
  int fd_ = -1;
  bool zero_copy_ = false;
  bool native_ = false;
  bool multi_buffer_ = false;
  std::uint32_t frame_capacity_ = 0;
  FrameFilter filter_;
  std::unique_ptr<XdpProgram> program_;
  int link_fd_ = -1;
};

}  // namespace efu::xdp
