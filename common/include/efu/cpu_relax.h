// One pause in a spin-wait loop: tells the core that this thread is waiting, so an SMT sibling
// (perhaps the receive thread) gets the execution units and the loop draws less power. A no-op
// where the architecture has no such hint.
#pragma once

namespace efu {

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace efu
