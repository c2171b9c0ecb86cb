/* efu's XDP program (af_xdp receive backend): UDP datagrams for efu's port go to the AF_XDP
 * socket of the receive queue they arrived on; every other frame goes on to the kernel
 * (XDP_PASS), so ARP, ICMP, SSH and other UDP ports keep working on the interface.
 *
 * It looks at one optional VLAN tag, IPv4 and IPv6 (with at most an IPv6 fragment header in
 * front of UDP). A first IP fragment of a datagram for efu goes to efu too, where it is counted
 * (datagrams are not reassembled); later fragments carry no port and go to the kernel. Built by
 * clang -target bpf and embedded in efu; efu writes `efu_config` before loading it. */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>

#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "xdp_program_abi.h"

/* Queue index -> AF_XDP socket. efu fills the entry of its --queue. */
struct {
  __uint(type, BPF_MAP_TYPE_XSKMAP);
  __uint(max_entries, 256);
  __type(key, __u32);
  __type(value, __u32);
} efu_xsks SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, EFU_XDP_COUNTERS);
  __uint(map_flags, BPF_F_MMAPABLE);
  __type(key, __u32);
  __type(value, __u64);
} efu_counters SEC(".maps");

const volatile struct efu_xdp_config efu_config = {};

struct vlan_tag {
  __be16 tci;
  __be16 proto;
};

struct ipv6_fragment {
  __u8 nexthdr;
  __u8 reserved;
  __be16 offset_flags; /* offset in the high 13 bits */
  __be32 id;
};

static __always_inline void count(__u32 slot) {
  __u64 *c = bpf_map_lookup_elem(&efu_counters, &slot);
  if (c) __sync_fetch_and_add(c, 1);
}

static __always_inline int ipv6_equal(const struct ipv6hdr *ip6, const volatile __u8 *want) {
  const __u8 *got = ip6->daddr.s6_addr;
#pragma unroll
  for (int i = 0; i < 16; ++i) {
    if (got[i] != want[i]) return 0;
  }
  return 1;
}

/* The helpers below each take one header. They return the next header, or NULL when the frame
 * is not for efu or too short to hold what they read: every read is checked against `end`
 * first, as the verifier demands. They are always inlined, so the verifier sees one function
 * and the program costs no calls. */

/* The Ethernet header and at most one VLAN tag (802.1Q or 802.1ad): the L3 header, its
 * EtherType in *proto. */
static __always_inline void *skip_ethernet(void *data, void *end, __be16 *proto) {
  struct ethhdr *eth = data;
  if ((void *)(eth + 1) > end) return NULL;
  *proto = eth->h_proto;
  if (*proto != bpf_htons(ETH_P_8021Q) && *proto != bpf_htons(ETH_P_8021AD)) return eth + 1;
  struct vlan_tag *tag = (void *)(eth + 1);
  if ((void *)(tag + 1) > end) return NULL;
  *proto = tag->proto;
  return tag + 1;
}

/* An IPv4 header: UDP, efu's address if it asked for one, and not a later fragment. */
static __always_inline struct udphdr *ipv4_udp(void *l3, void *end, __u16 match) {
  if (!(match & EFU_XDP_MATCH_IPV4)) return NULL;
  struct iphdr *ip = l3;
  if ((void *)(ip + 1) > end) return NULL;
  if (ip->protocol != IPPROTO_UDP || ip->ihl < 5) return NULL;
  if ((match & EFU_XDP_MATCH_ADDR4) && ip->daddr != efu_config.addr4) return NULL;
  if (ip->frag_off & bpf_htons(0x1fff)) return NULL; /* not a first fragment: no port */
  return (void *)ip + ip->ihl * 4;
}

/* An IPv6 header: efu's address if it asked for one, then UDP, directly or after the fragment
 * header of a first fragment. */
static __always_inline struct udphdr *ipv6_udp(void *l3, void *end, __u16 match) {
  if (!(match & EFU_XDP_MATCH_IPV6)) return NULL;
  struct ipv6hdr *ip6 = l3;
  if ((void *)(ip6 + 1) > end) return NULL;
  if ((match & EFU_XDP_MATCH_ADDR6) && !ipv6_equal(ip6, efu_config.addr6)) return NULL;
  __u8 next = ip6->nexthdr;
  void *l4 = ip6 + 1;
  if (next == IPPROTO_FRAGMENT) {
    struct ipv6_fragment *frag = l4;
    if ((void *)(frag + 1) > end) return NULL;
    if (frag->offset_flags & bpf_htons(0xfff8)) return NULL; /* not a first fragment */
    next = frag->nexthdr;
    l4 = frag + 1;
  }
  return next == IPPROTO_UDP ? l4 : NULL;
}

/* The UDP header of a datagram for efu's port, or NULL. */
static __always_inline struct udphdr *efu_udp(void *data, void *end) {
  const __u16 match = efu_config.match;
  __be16 proto = 0;
  void *l3 = skip_ethernet(data, end, &proto);
  if (!l3) return NULL;
  struct udphdr *udp = NULL;
  if (proto == bpf_htons(ETH_P_IP))
    udp = ipv4_udp(l3, end, match);
  else if (proto == bpf_htons(ETH_P_IPV6))
    udp = ipv6_udp(l3, end, match);
  if (!udp || (void *)(udp + 1) > end) return NULL;
  return udp->dest == efu_config.port ? udp : NULL;
}

SEC("xdp")
int efu_xdp_redirect(struct xdp_md *ctx) {
  void *data = (void *)(long)ctx->data;
  void *end = (void *)(long)ctx->data_end;
  if (!efu_udp(data, end)) return XDP_PASS;

  /* efu's datagram. A queue without efu's socket cannot deliver it: drop it and count it, so
   * that a NIC spreading efu's flow over several queues shows up in efu's counters. */
  const long action = bpf_redirect_map(&efu_xsks, ctx->rx_queue_index, XDP_DROP);
  if (action == XDP_DROP) count(EFU_XDP_COUNTER_NO_SOCKET);
  return (int)action;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
