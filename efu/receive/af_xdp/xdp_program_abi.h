/* What efu's XDP program and the af_xdp backend agree on: the configuration the host writes into
 * the program's read-only data before it loads it, and the indices of the program's counters.
 * Plain C, included by both the BPF program (clang -target bpf) and the host (C++). */
#ifndef EFU_AF_XDP_XDP_PROGRAM_ABI_H
#define EFU_AF_XDP_XDP_PROGRAM_ABI_H

#include <linux/types.h>

/* Which datagrams are redirected to efu's AF_XDP socket (besides the destination port). */
#define EFU_XDP_MATCH_IPV4 0x1u  /* IPv4 datagrams */
#define EFU_XDP_MATCH_IPV6 0x2u  /* IPv6 datagrams */
#define EFU_XDP_MATCH_ADDR4 0x4u /* ... only those to addr4 */
#define EFU_XDP_MATCH_ADDR6 0x8u /* ... only those to addr6 */

struct efu_xdp_config {
  __u8 addr6[16]; /* destination IPv6 address, as on the wire */
  __u32 addr4;    /* destination IPv4 address, network byte order */
  __u16 port;     /* destination UDP port, network byte order */
  __u16 match;    /* EFU_XDP_MATCH_* */
};

/* Slots of the program's counter map (an array of __u64, mmap-able, updated atomically). */
enum efu_xdp_counter {
  /* Datagrams for efu that arrived on a NIC queue without efu's socket: dropped. */
  EFU_XDP_COUNTER_NO_SOCKET = 0,
  EFU_XDP_COUNTERS = 8
};

#endif
