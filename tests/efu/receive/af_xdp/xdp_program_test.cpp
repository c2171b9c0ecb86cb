// efu's XDP program, run by the kernel on literal frames (BPF_PROG_TEST_RUN) without attaching
// it: which frames it takes for efu and which it passes on to the kernel. With no AF_XDP socket
// in its table, a frame it takes for efu comes back as XDP_DROP and is counted as no_socket; a
// frame that is not efu's comes back as XDP_PASS. Needs CAP_BPF (root); skipped without it.
#include "receive/af_xdp/xdp_program.h"

#include <linux/bpf.h>

#include <memory>
#include <string>

#include <bpf/bpf.h>
#include <gtest/gtest.h>

#include "receive/af_xdp/xdp_program_abi.h"
#include "efu/errors.h"
#include "test_frames.h"

namespace efu::xdp {
namespace {

using namespace test;

std::unique_ptr<XdpProgram> load(const FrameFilter& filter, bool multi_buffer = false) {
  try {
    return std::make_unique<XdpProgram>(filter, multi_buffer);
  } catch (const ConfigError& e) {
    if (std::string(e.what()).find("the kernel refused") == std::string::npos) throw;
    return nullptr;
  }
}

// The program's verdict on one frame.
int run(const XdpProgram& program, const Bytes& frame) {
  bpf_test_run_opts opts{};
  opts.sz = sizeof(opts);
  opts.data_in = frame.data();
  opts.data_size_in = static_cast<__u32>(frame.size());
  opts.repeat = 1;
  EXPECT_EQ(bpf_prog_test_run_opts(program.fd(), &opts), 0);
  return static_cast<int>(opts.retval);
}

#define LOAD_OR_SKIP(name, ...)                         \
  std::unique_ptr<XdpProgram> name = load(__VA_ARGS__); \
  if (!name) GTEST_SKIP() << "the kernel refuses to load XDP programs here (root?)"

TEST(XdpProgram, TakesEfusDatagramsAndCountsThemWithoutSocket) {
  LOAD_OR_SKIP(program, port_9000_any_address());
  Bytes vlan(kIpv4Frame.begin(), kIpv4Frame.begin() + 12);
  for (std::uint8_t b : {0x81, 0x00, 0x00, 0x2A}) vlan.push_back(b);
  vlan.insert(vlan.end(), kIpv4Frame.begin() + 12, kIpv4Frame.end());
  Bytes first_fragment = kIpv4Frame;
  first_fragment[20] = 0x20;  // MF: the first fragment carries the port, efu counts it
  for (const Bytes* frame :
       std::initializer_list<const Bytes*>{&kIpv4Frame, &kIpv6Frame, &vlan, &first_fragment}) {
    EXPECT_EQ(run(*program, *frame), XDP_DROP);
  }
  EXPECT_EQ(run(*program, ipv6_with_fragment_header(0x00, 0x00)), XDP_DROP);  // atomic
  EXPECT_EQ(run(*program, ipv6_with_fragment_header(0x00, 0x01)), XDP_DROP);  // first
  EXPECT_EQ(program->counter(EFU_XDP_COUNTER_NO_SOCKET), 6u);
}

TEST(XdpProgram, PassesEverythingElseToTheKernel) {
  LOAD_OR_SKIP(program, port_9000_any_address());
  Bytes other_port = kIpv4Frame;
  other_port[37] = 0x29;  // 9001
  Bytes tcp = kIpv4Frame;
  tcp[23] = 0x06;
  Bytes arp = kIpv4Frame;
  arp[13] = 0x06;
  Bytes later_fragment = kIpv4Frame;
  later_fragment[21] = 0xB9;  // offset 185 * 8: no UDP header in it
  const Bytes short_frame(kIpv4Frame.begin(), kIpv4Frame.begin() + 30);  // IPv4 header cut
  Bytes hop_by_hop = kIpv6Frame;
  hop_by_hop[20] = 0x00;
  for (const Bytes* frame : std::initializer_list<const Bytes*>{
           &other_port, &tcp, &arp, &later_fragment, &short_frame, &hop_by_hop}) {
    EXPECT_EQ(run(*program, *frame), XDP_PASS);
  }
  EXPECT_EQ(run(*program, ipv6_with_fragment_header(0x00, 0xB8)), XDP_PASS);  // offset 23
  EXPECT_EQ(program->counter(EFU_XDP_COUNTER_NO_SOCKET), 0u);
}

TEST(XdpProgram, FamilyAndAddressFilter) {
  FrameFilter v4_to_2 = port_9000_any_address();
  v4_to_2.ipv6 = false;
  v4_to_2.match_addr4 = true;
  v4_to_2.addr4 = {10, 99, 0, 2};
  LOAD_OR_SKIP(program, v4_to_2);
  EXPECT_EQ(run(*program, kIpv4Frame), XDP_DROP);
  EXPECT_EQ(run(*program, kIpv6Frame), XDP_PASS);
  Bytes to_3 = kIpv4Frame;
  to_3[33] = 3;
  EXPECT_EQ(run(*program, to_3), XDP_PASS);

  FrameFilter v6_to_2 = port_9000_any_address();
  v6_to_2.ipv4 = false;
  v6_to_2.match_addr6 = true;
  v6_to_2.addr6 = {0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02};
  LOAD_OR_SKIP(program6, v6_to_2);
  EXPECT_EQ(run(*program6, kIpv6Frame), XDP_DROP);
  EXPECT_EQ(run(*program6, kIpv4Frame), XDP_PASS);
  Bytes to_1 = kIpv6Frame;
  to_1[53] = 0x01;
  EXPECT_EQ(run(*program6, to_1), XDP_PASS);
}

TEST(XdpProgram, MultiBufferProgramDecidesTheSame) {
  LOAD_OR_SKIP(program, port_9000_any_address(), true);
  EXPECT_EQ(run(*program, kIpv4Frame), XDP_DROP);
  Bytes other_port = kIpv6Frame;
  other_port[57] = 0x29;
  EXPECT_EQ(run(*program, other_port), XDP_PASS);
}

}  // namespace
}  // namespace efu::xdp
