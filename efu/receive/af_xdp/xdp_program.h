// efu's XDP program (xdp_redirect.bpf.c), embedded in efu: loaded with the datagram filter
// written into it, the AF_XDP socket table and the program's counters. XdpSocket attaches it;
// tests run it on literal frames (BPF_PROG_TEST_RUN) without attaching it anywhere.
#pragma once

#include <cstdint>

#include "receive/af_xdp/frame_parser.h"

struct bpf_object;

namespace efu::xdp {

class XdpProgram {
 public:
  /// Opens and loads the program with `filter` (port, families, addresses). `multi_buffer`
  /// loads it as able to take frames of several buffers. Throws ConfigError naming what the
  /// kernel refused (capabilities, BPF support).
  XdpProgram(const FrameFilter& filter, bool multi_buffer);
  ~XdpProgram();
  XdpProgram(const XdpProgram&) = delete;
  XdpProgram& operator=(const XdpProgram&) = delete;

  int fd() const noexcept { return prog_fd_; }
  /// Sends efu's datagrams that arrive on `queue` to the AF_XDP socket `socket_fd`.
  /// Throws ConfigError.
  void set_socket(unsigned queue, int socket_fd);
  /// One of the program's counters (efu_xdp_counter); a plain load from mapped memory.
  std::uint64_t counter(unsigned index) const noexcept { return counters_[index]; }

 private:
  void release() noexcept;

  bpf_object* object_ = nullptr;
  int prog_fd_ = -1;
  int sockets_fd_ = -1;
  const volatile std::uint64_t* counters_ = nullptr;
  std::size_t counters_bytes_ = 0;
};

}  // namespace efu::xdp
