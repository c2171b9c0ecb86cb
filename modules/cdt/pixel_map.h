// The hot path's form of geometry.h: every configured (ring, FEN) pair and UnitId resolved once,
// at construction, into a plan, so a readout's pixel is a table lookup and a few integer ops,
// the same for every module type (no switch, so no mispredicted branch when a packet mixes
// types). Bit-identical to pixel() in geometry.h, which stays the readable definition; the
// tables are filled by calling its formulas, not by restating them.
//
// Why it works: every module type's (x, y) is a sum of an anode term, a cathode term and a
// constant of the module and UnitId (geometry.h, Coords), and every check a type makes is a
// window on x or y with one rejection (PixelStatus):
//   SUMO endcaps: cassette in 0..n−1  ⇔  x − sumo_x(sector, sumo, 0, 0) in 0 .. 2n−1 (kCassette),
//                 as x = first column of the SUMO + 2·cassette + counter, counter 0 or 1;
//   PADetector:   cassette in 0..15   ⇔  x − pa_x(sector, 0, 0) in 0..31 (kCassette), likewise;
//   the others:   (x, y) inside the grid (kPixel; never fails for the mantles).
// So, per plan:
//   x' = x0 + X_A[anode] + X_C[cathode],  y' = y0 + Y_A[anode] + Y_C[cathode]
//   valid ⇔ x' < xspan and y' < yspan (unsigned), else the plan's rejection
//   pixel = base + x' + nx·y',  base = 1 + the type's offset + window corner (xlo + nx·ylo)
// with X_A[a] = x(a, 0) − x(0, 0), X_C[c] = x(0, c) − x(0, 0) (likewise Y), x0 = x(0, 0) − xlo.
//
// Both sums in one 32-bit add: a term holds x in its low 16 bits and y in its high 16
// (pack(x, y) = x + 65536·y mod 2^32), so x0 + X_A + X_C and y0 + Y_A + Y_C come out of one
// addition of three packed words: xy = pack(x', y' + borrow), where borrow = ⌊x'/65536⌋ is 0 when
// 0 ≤ x' < 65536 and −1 when x' < 0. Then x' mod 65536 = xy & 0xFFFF and y' = xy >> 16 (mod
// 65536). That is exact for the test because the builder checks |x'|, |y'| < 32768 for every
// anode and cathode (so x' mod 65536 < xspan ⇔ 0 ≤ x' < xspan, as xspan ≤ 32767), and a borrow
// only happens when x' < 0, which rejects the readout whatever y is.
// A (ring, FEN) with no module, or with an Index out of range, gets plans that always reject
// (span 0) with kUnconfigured or kIndex; the same for a cuboid FEN's missing second cuboid.
//
// Size: 144 pairs × 8 UnitId plans × 20 B = 22.5 KB of plans, plus 2 KB of terms (256 anode +
// 256 cathode entries of 2 × int16) per distinct term table; identical tables are shared, so
// there are at most 13 (26 KB; DREAM uses 9, MAGIC 3, HEIMDAL 2). 48.5 KB in all, inside the
// object: built once per pipeline, in its constructor, with no allocation and no pointer to
// follow per readout.
#pragma once

#include <array>
#include <cstdint>

#include "config.h"
#include "geometry.h"

namespace efu::cdt {

class PixelMap {
 public:
  explicit PixelMap(const ModuleTable& modules);

  /// pixel(modules, r) of geometry.h for the readout's (fiber, FEN, UnitId, anode, cathode).
  PixelResult pixel(std::uint8_t fiber, std::uint8_t fen, std::uint8_t unit, std::uint8_t anode,
                    std::uint8_t cathode) const noexcept {
    if (fiber >= 2 * kRings || fen >= kFens) [[unlikely]] {
      return reject(fiber >= 2 * kRings ? PixelStatus::kRing : PixelStatus::kFen);
    }
    const Plan& p = plans_[((fiber / 2U) * kFens + fen) * kPlansPerSlot + unit % kPlansPerSlot];
    if (unit >= kPlansPerSlot && !p.any_unit) [[unlikely]] return reject(PixelStatus::kUnit);
    const std::uint32_t xy =
        p.xy0 + terms_[p.terms + anode] + terms_[p.terms + kTermsPerSide + cathode];
    const std::uint32_t x = xy & 0xFFFFU;
    const std::uint32_t y = xy >> 16;
    // A select, not a branch, in intent: the parser branches on the status once. (GCC makes a
    // jump of it anyway, mispredicted about once per rejection: 14 % of DREAM's benchmark
    // readouts. Masks instead cost more instructions than the misses; docs/cdt.md "Speed".)
    const bool inside = (x < p.xspan) & (y < p.yspan);
    return PixelResult{inside ? PixelStatus::kOk : p.fail, inside ? p.base + x + p.nx * y : 0U};
  }

  /// Distinct term tables (for the size in docs/cdt.md and the tests).
  std::size_t term_tables() const noexcept { return term_tables_; }

  /// One anode or cathode term of x and y, packed (see the file comment).
  using Term = std::uint32_t;
  static constexpr Term pack(std::int32_t x, std::int32_t y) noexcept {
    return static_cast<std::uint32_t>(x) + (static_cast<std::uint32_t>(y) << 16);
  }
  /// What a (ring, FEN, UnitId) resolves to (see the file comment). 20 bytes.
  struct Plan {
    Term xy0 = 0;  // pack(x0, y0)
    std::uint32_t base = 0;
    std::uint16_t terms = 0;  // first anode term in terms_; the cathode terms follow
    std::uint16_t xspan = 0;  // 0: always rejects
    std::uint16_t yspan = 0;
    std::uint16_t nx = 0;
    PixelStatus fail = PixelStatus::kUnconfigured;
    bool any_unit = true;  // the plan is also UnitId 8..255's (else those are kUnit)
  };
  /// A pair's plans are indexed by UnitId mod 8: the SUMOs 3..6 and cuboids 0, 1 have their
  /// own, the other UnitIds of those types a kUnit plan; a type that ignores UnitId (and a pair
  /// that rejects every readout) has the same plan in all 8, any_unit set.
  static constexpr std::uint32_t kPlansPerSlot = 8;
  static constexpr std::uint32_t kTermsPerSide = 256;
  /// Distinct term tables a ModuleTable can need: the zero one, 4 SUMOs, 2 mantle widths,
  /// 4 cuboid rotations, PA, HEIMDAL.
  static constexpr std::uint32_t kMaxTermTables = 13;

 private:
  using TermTable = std::array<Term, 2 * kTermsPerSide>;
  /// A window on x (y's is the grid's whole height in every type) and its rejection.
  struct Window {
    std::int32_t xlo;
    std::uint32_t xspan;
    PixelStatus fail;
  };
  void build(std::uint32_t slot, const Module& m);
  void build_cuboid(Plan& p, ModuleType type, std::uint8_t index);
  template <typename Coordinates>
  Plan plan(ModuleType type, Window w, Coordinates coords);
  std::uint16_t add_terms(const TermTable& table);
  static void same_for_every_unit(Plan* plans, Plan p);
  static void unit_plans_only(Plan* plans);

  std::array<Plan, kRings * kFens * kPlansPerSlot> plans_{};
  std::array<Term, kMaxTermTables * 2 * kTermsPerSide> terms_{};  // the first table is all zero
  std::uint32_t term_tables_ = 1;
};

}  // namespace efu::cdt
