// The lanes of readout_lanes.h with AVX2. Every function here that uses AVX2 carries
// gnu::target("avx2") and has internal linkage (or is the header's entry point), so the rest of
// the program stays baseline x86-64.
//
// Each step says which scalar line it is (ReadoutParser::timed, the formulas of pixel_map.h,
// Calibration::Lookup). A lane holds one readout; a status vector starts at kOk and each check,
// from the last to the first, overwrites it where it fails, so that the first failing check is
// the one a lane reports, as the scalar code's early returns do. The arithmetic of a rejected
// lane goes on with whatever its values are (a division by zero, an out-of-range conversion):
// its results are never read.
#include <algorithm>
#include <limits>

#include "readout_lanes.h"
#include "readout_parser.h"

#if defined(__x86_64__)
#include <immintrin.h>
#define EFU_LANES_AVX2 1
#endif

namespace efu::caen::lanes {

#if defined(EFU_LANES_AVX2)

bool available() noexcept { return __builtin_cpu_supports("avx2") != 0; }

namespace {

#define EFU_AVX2 [[gnu::target("avx2"), gnu::always_inline]] inline

constexpr std::uint32_t error_code(ReadoutError e) noexcept {
  return kFirstError + static_cast<std::uint32_t>(e);
}

/// Where the mask is set, `code`; elsewhere `status` (a later, so lower-priority, outcome).
EFU_AVX2 __m256i fail_where(__m256i status, __m256i mask, std::uint32_t code) {
  return _mm256_blendv_epi8(status, _mm256_set1_epi32(static_cast<int>(code)), mask);
}

/// The checks of a formula's limits as a status per lane (kOk where all pass), from the last
/// to the first: ring, FEN, group (each above its maximum), then PixelMap::SumLimits::check
/// (the sum 0 → amplitude_zero, above MaxAmpl → amplitude_high, below the threshold →
/// amplitude_low). A limit of Limits::kNoLimit never fails: every value is below it.
EFU_AVX2 __m256i limit_checks(const Limits& l, __m256i ring, __m256i fen, __m256i group,
                              __m256i sum) {
  __m256i status =
      fail_where(_mm256_setzero_si256(), _mm256_cmpgt_epi32(_mm256_set1_epi32(l.threshold), sum),
                 error_code(ReadoutError::kAmplitudeLow));
  status = fail_where(status, _mm256_cmpgt_epi32(sum, _mm256_set1_epi32(l.max_amplitude)),
                      error_code(ReadoutError::kAmplitudeHigh));
  status = fail_where(status, _mm256_cmpeq_epi32(sum, _mm256_setzero_si256()),
                      error_code(ReadoutError::kAmplitudeZero));
  status = fail_where(status, _mm256_cmpgt_epi32(group, _mm256_set1_epi32(l.max_group)),
                      error_code(ReadoutError::kGroup));
  status = fail_where(status, _mm256_cmpgt_epi32(fen, _mm256_set1_epi32(l.max_fen)),
                      error_code(ReadoutError::kFen));
  return fail_where(status, _mm256_cmpgt_epi32(ring, _mm256_set1_epi32(l.max_ring)),
                    error_code(ReadoutError::kRing));
}

/// LogicalGeometry::pixel for eight lanes: 1 + x + nx·y where (x, y) is on `grid`, else 0.
/// x and y must be in [0, 2^31) on every lane whose pixel is used (the signed compares are
/// then the unsigned ones); each caller says why they are.
EFU_AVX2 __m256i grid_pixel(__m256i x, __m256i y, ess::LogicalGeometry grid) {
  const __m256i nx = _mm256_set1_epi32(static_cast<int>(grid.nx));
  const __m256i on_grid =
      _mm256_and_si256(_mm256_cmpgt_epi32(nx, x),
                       _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(grid.ny)), y));
  return _mm256_and_si256(on_grid, _mm256_add_epi32(_mm256_add_epi32(x, _mm256_set1_epi32(1)),
                                                    _mm256_mullo_epi32(nx, y)));
}

/// The lanes' outcomes and pixels into `out`, and which lanes are events (Out::good): `outcome`
/// is each lane's status before the pixel check (kOk where every earlier check passed); a kOk
/// lane whose pixel is 0 (off the grid) is rejected as pixel, the last check of every formula.
EFU_AVX2 void write_outcome(Out& out, __m256i outcome, __m256i pixel) {
  const __m256i zero = _mm256_setzero_si256();
  const __m256i off_grid =
      _mm256_and_si256(_mm256_cmpeq_epi32(outcome, zero), _mm256_cmpeq_epi32(pixel, zero));
  const __m256i status = fail_where(outcome, off_grid, error_code(ReadoutError::kPixel));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out.status), status);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out.pixel), pixel);
  out.good = static_cast<std::uint32_t>(
      _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(status, zero))));
}

/// Unsigned 64-bit a > b: the signed compare with both sign bits flipped.
EFU_AVX2 __m256i greater_u64(__m256i a, __m256i b) {
  const __m256i sign = _mm256_set1_epi64x(std::numeric_limits<std::int64_t>::min());
  return _mm256_cmpgt_epi64(_mm256_xor_si256(a, sign), _mm256_xor_si256(b, sign));
}

/// Two vectors of four 64-bit lanes (lanes 0–3, 4–7) as one of eight 32-bit lanes: each lane's
/// low half (a mask's is the mask). The high vector's low halves are shifted up into the odd
/// 32-bit places and blended in, then one permute puts lanes 0–3 before 4–7: one shuffle (port
/// 5 on Ice Lake, the lanes' busiest port) where two permutes and an insert were three.
EFU_AVX2 __m256i narrow(__m256i low_lanes, __m256i high_lanes) {
  const __m256i mixed = _mm256_blend_epi32(low_lanes, _mm256_slli_epi64(high_lanes, 32), 0xAA);
  return _mm256_permutevar8x32_epi32(mixed, _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7));
}

/// A 4-lane 64-bit mask (a compare of doubles) as four 32-bit lanes: each lane's low half.
EFU_AVX2 __m128i mask_to_32(__m256d mask) {
  const __m256i evens = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
  return _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(_mm256_castpd_si256(mask), evens));
}

/// The 32-bit words 0..5 of eight 24-byte readouts from `blocks`, word w of readout i in lane i
/// of word[w]. By loads and a transpose, not vpgatherdd: on the Ice Lake VMs this project is
/// measured on, five gathers took half of MIRACLES' lanes' time (docs/performance.md; the
/// mitigation of Gather Data Sampling, "Downfall", is known to slow gathers so).
///
/// A 256-bit register holds 16 bytes of readout i in its low half and of readout i + 4 in its
/// high half; four such (i = 0..3) are transposed as two 4 × 4 matrices of words at once
/// (unpack 32, then 64 bits), which leaves word w of readouts 0..3 | 4..7 in one register.
/// Words 0..3 come from each readout's bytes 0..15, words 4 and 5 from its bytes 8..23.
struct Words {
  __m256i word[6];  // fibre|fen|length, time_high, time_low, flags|group|unused, A|B, C|D
};
EFU_AVX2 __m256i pair(const std::uint8_t* blocks, int i, int offset) {
  const auto* low = reinterpret_cast<const __m128i*>(blocks + 24 * i + offset);
  const auto* high = reinterpret_cast<const __m128i*>(blocks + 24 * (i + 4) + offset);
  return _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128(low)),
                                 _mm_loadu_si128(high), 1);
}
EFU_AVX2 void transpose(__m256i r0, __m256i r1, __m256i r2, __m256i r3, __m256i* w) {
  const __m256i t0 = _mm256_unpacklo_epi32(r0, r1);  // a0 b0 a1 b1
  const __m256i t1 = _mm256_unpackhi_epi32(r0, r1);  // a2 b2 a3 b3
  const __m256i t2 = _mm256_unpacklo_epi32(r2, r3);  // c0 d0 c1 d1
  const __m256i t3 = _mm256_unpackhi_epi32(r2, r3);  // c2 d2 c3 d3
  w[0] = _mm256_unpacklo_epi64(t0, t2);              // a0 b0 c0 d0
  w[1] = _mm256_unpackhi_epi64(t0, t2);
  w[2] = _mm256_unpacklo_epi64(t1, t3);
  w[3] = _mm256_unpackhi_epi64(t1, t3);
}
EFU_AVX2 Words load_words(const std::uint8_t* blocks) {
  Words out;
  transpose(pair(blocks, 0, 0), pair(blocks, 1, 0), pair(blocks, 2, 0), pair(blocks, 3, 0),
            out.word);
  __m256i tail[4];  // words 2..5
  transpose(pair(blocks, 0, 8), pair(blocks, 1, 8), pair(blocks, 2, 8), pair(blocks, 3, 8), tail);
  out.word[4] = tail[2];
  out.word[5] = tail[3];
  return out;
}

/// The time rule for four lanes (64-bit): the reference pulse and TOF, and the masks of
/// tof_negative and tof_too_large. ReadoutParser::timed:
///   time_ns = high·10^9 + (uint64)(int64)(low · kTickNs) + readout_delay_ns
///   time_of_flight(time_ns, pulse, prev, max_tof)
/// `low` is below 2^31 on every lane that reaches this check (time_fraction came first), so its
/// signed conversion is exact and low · kTickNs < 10^9 truncates through 32 bits as through 64.
struct Time4 {
  __m256i pulse, tof, negative, too_large;
  __m256i earlier;  // the reference is the previous pulse
};
EFU_AVX2 Time4 time4(__m128i high, __m128i low, const TimeRule& rule) {
  const __m256i seconds =
      _mm256_mul_epu32(_mm256_cvtepu32_epi64(high), _mm256_set1_epi64x(1'000'000'000));
  const __m256d ticks = _mm256_mul_pd(_mm256_cvtepi32_pd(low), _mm256_set1_pd(ess::kTickNs));
  const __m256i fraction = _mm256_cvtepu32_epi64(_mm256_cvttpd_epi32(ticks));
  const __m256i time = _mm256_add_epi64(_mm256_add_epi64(seconds, fraction),
                                        _mm256_set1_epi64x(rule.readout_delay_ns));
  const __m256i pulse = _mm256_set1_epi64x(static_cast<std::int64_t>(rule.pulse_ns));
  const __m256i prev = _mm256_set1_epi64x(static_cast<std::int64_t>(rule.prev_pulse_ns));
  // time < pulse: measured against the previous pulse, unless it is before that one too.
  const __m256i before_pulse = greater_u64(pulse, time);
  const __m256i negative = _mm256_and_si256(before_pulse, greater_u64(prev, time));
  const __m256i reference = _mm256_blendv_epi8(pulse, prev, before_pulse);
  const __m256i tof = _mm256_sub_epi64(time, reference);
  const __m256i too_large =
      greater_u64(tof, _mm256_set1_epi64x(static_cast<std::int64_t>(rule.max_tof_ns)));
  return Time4{reference, tof, negative, too_large, before_pulse};
}

/// The checks every instrument makes first, for eight lanes, and the reference pulse and TOF
/// written to `out`. ReadoutBlockWalker: data_length == 24; ReadoutParser::timed: fibre ≤ 23,
/// FEN ≤ 23, time_low ≤ kMaxTimeLow, then the TOF. Returns the lanes' status so far, to be
/// overwritten by the formula's checks where these passed; `words` the readouts' words 0..4.
struct Front {
  __m256i status;   // the status of the checks above where one failed, else kOk
  __m256i failed;   // the lanes one of them rejected
  __m256i word[6];  // as Words
};
EFU_AVX2 Front front(const std::uint8_t* blocks, const TimeRule& rule, Out& out) {
  Front f;
  const Words words = load_words(blocks);
  for (int w = 0; w < 6; ++w) f.word[w] = words.word[w];
  const __m256i byte = _mm256_set1_epi32(0xFF);
  const __m256i fiber = _mm256_and_si256(f.word[0], byte);
  const __m256i fen = _mm256_and_si256(_mm256_srli_epi32(f.word[0], 8), byte);
  const __m256i length = _mm256_srli_epi32(f.word[0], 16);
  const __m256i high = f.word[1];
  const __m256i low = f.word[2];

  const Time4 t0 = time4(_mm256_castsi256_si128(high), _mm256_castsi256_si128(low), rule);
  const Time4 t1 = time4(_mm256_extracti128_si256(high, 1), _mm256_extracti128_si256(low, 1), rule);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out.pulse_ns), t0.pulse);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out.pulse_ns + 4), t1.pulse);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out.tof_ns), narrow(t0.tof, t1.tof));
  out.earlier = static_cast<std::uint32_t>(
      _mm256_movemask_ps(_mm256_castsi256_ps(narrow(t0.earlier, t1.earlier))));

  // From the last check to the first.
  __m256i status = _mm256_setzero_si256();
  const __m256i too_large = narrow(t0.too_large, t1.too_large);
  const __m256i negative = narrow(t0.negative, t1.negative);
  // low > kMaxTimeLow, unsigned: max(low, kMaxTimeLow + 1) == low.
  const __m256i bad_fraction = _mm256_cmpeq_epi32(
      _mm256_max_epu32(low, _mm256_set1_epi32(static_cast<int>(ess::kMaxTimeLow + 1))), low);
  const __m256i bad_fen = _mm256_cmpgt_epi32(fen, _mm256_set1_epi32(kMaxFen));
  const __m256i bad_fiber = _mm256_cmpgt_epi32(fiber, _mm256_set1_epi32(kMaxFiber));
  const __m256i bad_length = _mm256_xor_si256(
      _mm256_cmpeq_epi32(length, _mm256_set1_epi32(static_cast<int>(kReadoutSize))),
      _mm256_set1_epi32(-1));
  status = fail_where(status, too_large, error_code(ReadoutError::kTofTooLarge));
  status = fail_where(status, negative, error_code(ReadoutError::kTofNegative));
  status = fail_where(status, bad_fraction, error_code(ReadoutError::kTimeFraction));
  status = fail_where(status, bad_fen, error_code(ReadoutError::kFen));
  status = fail_where(status, bad_fiber, error_code(ReadoutError::kFiber));
  status = fail_where(status, bad_length, kBadLength);
  f.status = status;
  f.failed =
      _mm256_xor_si256(_mm256_cmpeq_epi32(status, _mm256_setzero_si256()), _mm256_set1_epi32(-1));
  return f;
}

/// What the formulas read of a readout, eight lanes: ring = fibre / 2, FEN and group (every
/// instrument), the amplitudes A and B as unsigned and their sum, below 2^17 (BIFROST, CSPEC
/// and MIRACLES; LoKI reads its four amplitudes as signed).
struct Fields {
  __m256i ring, fen, group, a, b, sum;
};
EFU_AVX2 Fields fields(const Front& f) {
  const __m256i byte = _mm256_set1_epi32(0xFF);
  Fields r;
  r.ring = _mm256_srli_epi32(_mm256_and_si256(f.word[0], byte), 1);
  r.fen = _mm256_and_si256(_mm256_srli_epi32(f.word[0], 8), byte);
  r.group = _mm256_and_si256(_mm256_srli_epi32(f.word[3], 8), byte);
  r.a = _mm256_and_si256(f.word[4], _mm256_set1_epi32(0xFFFF));
  r.b = _mm256_srli_epi32(f.word[4], 16);
  r.sum = _mm256_add_epi32(r.a, r.b);
  return r;
}

/// Four lanes' (double) A / (A + B) as floats: `static_cast<float>(1.0 * A / double(sum))`.
EFU_AVX2 __m128 ratio4(__m128i a, __m128i sum) {
  return _mm256_cvtpd_ps(_mm256_div_pd(_mm256_cvtepi32_pd(a), _mm256_cvtepi32_pd(sum)));
}

/// Four lanes of tube A's position, round_non_negative(h − (p − 0.5)·2·h) in double precision
/// (p promoted from float, as the scalar expression does): v is in [0, 2h] for h ≥ 0, so the
/// truncation through 32 bits is the scalar's through uint32, and
///   round = trunc(v) + (v − trunc(v) ≥ 0.5).
EFU_AVX2 __m128i tube_a4(__m128 p, __m256d h) {
  const __m256d scaled = _mm256_mul_pd(
      _mm256_mul_pd(_mm256_sub_pd(_mm256_cvtps_pd(p), _mm256_set1_pd(0.5)), _mm256_set1_pd(2.0)),
      h);
  const __m256d v = _mm256_sub_pd(h, scaled);
  const __m128i i = _mm256_cvttpd_epi32(v);
  const __m256d up =
      _mm256_cmp_pd(_mm256_sub_pd(v, _mm256_cvtepi32_pd(i)), _mm256_set1_pd(0.5), _CMP_GE_OQ);
  // −1 where rounding up: i − (−1) = i + 1.
  return _mm_sub_epi32(i, mask_to_32(up));
}

}  // namespace

namespace {
/// `v` clamped to [low, 2^31 − 1]: a limit a 17-bit sum or an 8-bit field is compared with the
/// same way in 32 bits.
std::int32_t clamp32(std::int64_t v, std::int64_t low) noexcept {
  return static_cast<std::int32_t>(
      std::clamp<std::int64_t>(v, low, std::numeric_limits<std::int32_t>::max()));
}

/// The sum's limits as the lanes compare them; without `check_high` MaxAmpl is not checked.
Limits sum_limits(const PixelMap::SumLimits& limits, bool check_high) noexcept {
  Limits l;
  if (check_high) l.max_amplitude = clamp32(limits.max_amplitude, -1);
  l.threshold = clamp32(limits.threshold, 0);
  return l;
}
/// sum_limits() and the ring's, FEN's and group's maxima.
Limits all_limits(std::uint32_t max_ring, std::uint32_t max_fen, std::uint32_t max_group,
                  const PixelMap::SumLimits& limits, bool check_high) noexcept {
  Limits l = sum_limits(limits, check_high);
  l.max_ring = clamp32(max_ring, 0);
  l.max_fen = clamp32(max_fen, 0);
  l.max_group = clamp32(max_group, 0);
  return l;
}
}  // namespace

MiraclesLanes MiraclesLanes::of(const PixelMap::MiraclesMap& map) noexcept {
  Limits limits = sum_limits(map.limits, true);
  limits.max_ring = clamp32(map.max_ring, 0);
  return MiraclesLanes{limits, map.half};
}

BifrostLanes BifrostLanes::of(const PixelMap::BifrostMap& map) noexcept {
  return BifrostLanes{all_limits(map.max_ring, map.max_fen, map.max_group, map.limits, true),
                      map.resolution, map.groups, map.calibration};
}

CspecLanes CspecLanes::of(const PixelMap::CspecMap& map) noexcept {
  return CspecLanes{all_limits(map.max_ring, map.max_fen, map.max_group, map.limits, false),
                    static_cast<std::int32_t>(map.resolution),
                    static_cast<std::int32_t>(map.resolution / kCspecGroupsPerRing)};
}

// PixelMap::MiraclesMap::operator(), lane by lane:
//   ring = fibre / 2 > MaxRing                → ring
//   sum = A + B: 0 → amplitude_zero; > MaxAmpl → amplitude_high; < threshold → amplitude_low
//   tube B = A < B; p = float(A / sum); h = half − 1
//   x = 2·group + (24 if ring is 1 or 3) + tube B
//   y = (half if ring is 2 or 3) + (tube B ? trunc(p·2·h) in float : round(h − (p − 0.5)·2·h))
//   pixel = 1 + x + 48·y, or pixel when (x, y) is off the 48 × 128 grid
EFU_AVX2 static void miracles8(const std::uint8_t* blocks, const TimeRule& time,
                               const MiraclesLanes& map, Out& out) {
  const Front f = front(blocks, time, out);
  const Fields in = fields(f);
  const __m256i ring = in.ring, group = in.group, a = in.a, b = in.b, sum = in.sum;

  const __m128 p0 = ratio4(_mm256_castsi256_si128(a), _mm256_castsi256_si128(sum));
  const __m128 p1 = ratio4(_mm256_extracti128_si256(a, 1), _mm256_extracti128_si256(sum, 1));
  const __m256 p = _mm256_set_m128(p1, p0);
  const std::int32_t h = map.half - 1;
  const __m256d h_double = _mm256_set1_pd(static_cast<double>(h));
  const __m256i along_a = _mm256_set_m128i(tube_a4(p1, h_double), tube_a4(p0, h_double));
  // p·2·h in float: (p · 2) · float(h), truncated.
  const __m256i along_b = _mm256_cvttps_epi32(
      _mm256_mul_ps(_mm256_mul_ps(p, _mm256_set1_ps(2.0F)), _mm256_set1_ps(static_cast<float>(h))));
  const __m256i tube_b = _mm256_cmpgt_epi32(b, a);
  const __m256i along = _mm256_blendv_epi8(along_a, along_b, tube_b);

  const __m256i ring_odd = _mm256_or_si256(_mm256_cmpeq_epi32(ring, _mm256_set1_epi32(1)),
                                           _mm256_cmpeq_epi32(ring, _mm256_set1_epi32(3)));
  const __m256i ring_high = _mm256_or_si256(_mm256_cmpeq_epi32(ring, _mm256_set1_epi32(2)),
                                            _mm256_cmpeq_epi32(ring, _mm256_set1_epi32(3)));
  // x = 2·group + (24 & ring_odd) − tube_b (the mask is −1 where tube B).
  const __m256i x = _mm256_sub_epi32(
      _mm256_add_epi32(_mm256_add_epi32(group, group),
                       _mm256_and_si256(ring_odd, _mm256_set1_epi32(kMiraclesRingXOffset))),
      tube_b);
  // x ≤ 2·255 + 25 and 0 ≤ y ≤ half + h on a lane that passed the checks (h ≥ 0).
  const __m256i y =
      _mm256_add_epi32(_mm256_and_si256(ring_high, _mm256_set1_epi32(map.half)), along);
  // The front's outcome wins where it failed, then ring and the sum's (limit_checks).
  const __m256i checks =
      limit_checks(map.limits, ring, in.fen, group, sum);  // no FEN, group limits
  write_outcome(out, _mm256_blendv_epi8(checks, f.status, f.failed),
                grid_pixel(x, y, kMiraclesGrid));
}

LokiLanes LokiLanes::of(const PixelMap& map) noexcept {
  const PixelMap::LokiTables tables = map.loki_tables();
  return LokiLanes{tables,
                   static_cast<std::int32_t>(std::clamp<std::int64_t>(
                       tables.threshold, std::numeric_limits<std::int32_t>::min(),
                       std::numeric_limits<std::int32_t>::max())),
                   map.unit_lookup(), map.loki_finish()};
}

namespace {

/// The 16-bit halves of eight words as signed 32-bit lanes (LoKI's amplitudes are two's
/// complement).
EFU_AVX2 __m256i low_signed(__m256i w) { return _mm256_srai_epi32(_mm256_slli_epi32(w, 16), 16); }
EFU_AVX2 __m256i high_signed(__m256i w) { return _mm256_srai_epi32(w, 16); }

/// Where `mask`, -1; a compare's complement.
EFU_AVX2 __m256i not_mask(__m256i mask) { return _mm256_xor_si256(mask, _mm256_set1_epi32(-1)); }

// A table look-up per lane ends in scalars; the vectors are built from them with inserts
// (lanes_u32, lanes_f64) rather than stored to an array and loaded as one vector, a load that
// cannot take its bytes from eight smaller stores still in flight (no store forwarding) and
// waits for them. `value(i)` is lane i's scalar.
template <typename Value>
EFU_AVX2 __m256i lanes_u32(Value value) {
  return _mm256_setr_epi32(static_cast<int>(value(0)), static_cast<int>(value(1)),
                           static_cast<int>(value(2)), static_cast<int>(value(3)),
                           static_cast<int>(value(4)), static_cast<int>(value(5)),
                           static_cast<int>(value(6)), static_cast<int>(value(7)));
}
/// Lanes first .. first + 3 of `value`, as doubles.
template <typename Value>
EFU_AVX2 __m256d lanes_f64(Value value, int first) {
  return _mm256_setr_pd(value(first), value(first + 1), value(first + 2), value(first + 3));
}

/// Four lanes' lo ≤ v ≤ hi (ordered compares: false for a NaN).
EFU_AVX2 __m256d between(__m256d v, __m256d lo, __m256d hi) {
  return _mm256_and_pd(_mm256_cmp_pd(v, lo, _CMP_GE_OQ), _mm256_cmp_pd(v, hi, _CMP_LE_OQ));
}

/// Four lanes' 0 ≤ v ≤ 1 (false for a NaN).
EFU_AVX2 __m256d inside_unit_range(__m256d v) {
  return _mm256_and_pd(_mm256_cmp_pd(v, _mm256_setzero_pd(), _CMP_GE_OQ),
                       _mm256_cmp_pd(v, _mm256_set1_pd(1.0), _CMP_LE_OQ));
}

/// Eight int32 numerators over eight int32 denominators, as doubles, into out[0..8).
EFU_AVX2 void divide(__m256i num, __m256i den, double* out) {
  _mm256_storeu_pd(out, _mm256_div_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(num)),
                                      _mm256_cvtepi32_pd(_mm256_castsi256_si128(den))));
  _mm256_storeu_pd(out + 4, _mm256_div_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(num, 1)),
                                          _mm256_cvtepi32_pd(_mm256_extracti128_si256(den, 1))));
}

/// Calibration::Lookup::unit_of(group, ratio) for eight lanes: the unit, or −1 (also for a
/// ratio outside [0, 1] or NaN). `ratio` is eight doubles in memory; `look` the lanes whose
/// groups are below the calibration's: the others read group 0's bucket 0, so that no load
/// leaves the tables, and their result is not used. The rule's steps, each table read a load
/// per lane:
///   k = min(floor(ratio · 64), 63); bucket (first, second) = the group's bucket k
///   unit = ratio in first's interval ? first : (in second's ? second : −1)
/// and for a bucket marked kScan (more than two units reach into it) scan_units(), per lane.
EFU_AVX2 __m256i unit_lanes(const Calibration::Lookup& units, __m256i group, const double* ratio,
                            __m256i look) {
  const __m256d r0 = _mm256_loadu_pd(ratio);
  const __m256d r1 = _mm256_loadu_pd(ratio + 4);
  const __m256i in_range =
      _mm256_set_m128i(mask_to_32(inside_unit_range(r1)), mask_to_32(inside_unit_range(r0)));
  const __m256d scale = _mm256_set1_pd(Calibration::Lookup::kTableBuckets);
  const __m256i k =
      _mm256_min_epi32(_mm256_set_m128i(_mm256_cvttpd_epi32(_mm256_mul_pd(r1, scale)),
                                        _mm256_cvttpd_epi32(_mm256_mul_pd(r0, scale))),
                       _mm256_set1_epi32(static_cast<int>(Calibration::Lookup::kTableBuckets - 1)));
  const __m256i use = _mm256_and_si256(look, in_range);
  alignas(32) std::uint32_t lane_group[kLanes], lane_k[kLanes];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lane_group), _mm256_and_si256(use, group));
  _mm256_store_si256(reinterpret_cast<__m256i*>(lane_k), _mm256_and_si256(use, k));
  struct Candidates {  // a lane's bucket: its two units and their interval ends
    std::int32_t first, second;
    double min_first, max_first, min_second, max_second;
  };
  Candidates c[kLanes];
  std::uint32_t scan = 0;  // lanes whose bucket says "test every interval"
  const double* ends_min = units.min();
  const double* ends_max = units.max();
  for (std::uint32_t i = 0; i < kLanes; ++i) {
    const auto bucket = units.bucket(lane_group[i], lane_k[i]);
    const bool scan_lane = bucket.first == Calibration::Lookup::kScan;
    scan |= static_cast<std::uint32_t>(scan_lane) << i;
    const std::uint32_t u1 = scan_lane ? 0U : bucket.first;
    const std::size_t e1 = units.ends(lane_group[i], u1);
    const std::size_t e2 = units.ends(lane_group[i], bucket.second);
    c[i] = Candidates{static_cast<std::int32_t>(u1),
                      bucket.second,
                      ends_min[e1],
                      ends_max[e1],
                      ends_min[e2],
                      ends_max[e2]};
  }
  const __m256i hit_first =
      _mm256_set_m128i(mask_to_32(between(r1, lanes_f64([&](int i) { return c[i].min_first; }, 4),
                                          lanes_f64([&](int i) { return c[i].max_first; }, 4))),
                       mask_to_32(between(r0, lanes_f64([&](int i) { return c[i].min_first; }, 0),
                                          lanes_f64([&](int i) { return c[i].max_first; }, 0))));
  const __m256i hit_second =
      _mm256_set_m128i(mask_to_32(between(r1, lanes_f64([&](int i) { return c[i].min_second; }, 4),
                                          lanes_f64([&](int i) { return c[i].max_second; }, 4))),
                       mask_to_32(between(r0, lanes_f64([&](int i) { return c[i].min_second; }, 0),
                                          lanes_f64([&](int i) { return c[i].max_second; }, 0))));
  const __m256i none = _mm256_set1_epi32(-1);
  __m256i unit = _mm256_blendv_epi8(
      _mm256_blendv_epi8(none, lanes_u32([&](int i) { return c[i].second; }), hit_second),
      lanes_u32([&](int i) { return c[i].first; }), hit_first);
  unit = _mm256_blendv_epi8(none, unit, in_range);
  scan &= static_cast<std::uint32_t>(_mm256_movemask_ps(_mm256_castsi256_ps(use)));
  if (scan == 0) [[likely]]
    return unit;
  alignas(32) std::int32_t lane_unit[kLanes];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lane_unit), unit);
  while (scan != 0) {  // the rare bucket of more than two units
    const int i = __builtin_ctz(scan);
    scan &= scan - 1;
    lane_unit[i] = units.scan_units(lane_group[i], ratio[i]);
  }
  return _mm256_load_si256(reinterpret_cast<const __m256i*>(lane_unit));
}

/// LokiFinish for lanes first .. first + 3 (u: each lane's unit calibration):
/// Calibration::correct's cubic and clamp, then
///   x = round_non_negative(corrected · (Resolution − 1))   (corrected in [0, 1]: x ≤ 65535)
/// The coefficients are within ±10^6 (the calibration file's rule) and pos in [0, 1] on a good
/// lane, so the cubic is finite: never the NaN whose conversion would differ from the scalar's.
/// Writes the clamps (low 1, high 2) and returns x as four 32-bit lanes.
struct Finish4 {
  __m128i x;
  __m128i clamp;
};
EFU_AVX2 Finish4 finish4(const double* pos, const UnitCalibration* const* u, int first,
                         double x_scale) {
  const __m256d p = _mm256_loadu_pd(pos + first);
  const __m256d ca = lanes_f64([&](int i) { return u[i]->a; }, first);
  const __m256d cb = lanes_f64([&](int i) { return u[i]->b; }, first);
  const __m256d cc = lanes_f64([&](int i) { return u[i]->c; }, first);
  const __m256d cd = lanes_f64([&](int i) { return u[i]->d; }, first);
  // delta = a + pos·(b + pos·(c + pos·d)); corrected = pos − delta
  const __m256d inner = _mm256_add_pd(cc, _mm256_mul_pd(p, cd));
  const __m256d middle = _mm256_add_pd(cb, _mm256_mul_pd(p, inner));
  const __m256d delta = _mm256_add_pd(ca, _mm256_mul_pd(p, middle));
  const __m256d corrected = _mm256_sub_pd(p, delta);
  // low ? 0.0 : (high ? 1.0 : corrected), with low = corrected < 0, high = corrected > 1
  const __m256d low = _mm256_cmp_pd(corrected, _mm256_setzero_pd(), _CMP_LT_OQ);
  const __m256d high = _mm256_cmp_pd(corrected, _mm256_set1_pd(1.0), _CMP_GT_OQ);
  const __m256d clamped = _mm256_blendv_pd(_mm256_blendv_pd(corrected, _mm256_set1_pd(1.0), high),
                                           _mm256_setzero_pd(), low);
  const __m256d v = _mm256_mul_pd(clamped, _mm256_set1_pd(x_scale));
  const __m128i i = _mm256_cvttpd_epi32(v);
  const __m256d up =
      _mm256_cmp_pd(_mm256_sub_pd(v, _mm256_cvtepi32_pd(i)), _mm256_set1_pd(0.5), _CMP_GE_OQ);
  // clamp = low | high << 1; the masks are −1: (−low) | (−high << 1)
  const __m128i clamp =
      _mm_or_si128(_mm_sub_epi32(_mm_setzero_si128(), mask_to_32(low)),
                   _mm_slli_epi32(_mm_sub_epi32(_mm_setzero_si128(), mask_to_32(high)), 1));
  return Finish4{_mm_sub_epi32(i, mask_to_32(up)), clamp};
}

/// LoKI's step 1 (see loki()): the checks after the slot's, as a status per lane (kOk where
/// all pass), the slot indices and the two ratios.
struct LokiPrepared {
  __m256i status;
  alignas(32) std::uint32_t slot_index[kLanes];
  alignas(32) double pos[kLanes];
  alignas(32) double straw_ratio[kLanes];
};
EFU_AVX2 LokiPrepared loki_prepare(const Front& f, const LokiLanes& map) {
  const Fields in = fields(f);  // ring, FEN, group (its unsigned amplitudes are not LoKI's)
  const __m256i fen = in.fen, group = in.group;
  const __m256i a = low_signed(f.word[4]);
  const __m256i b = high_signed(f.word[4]);
  const __m256i c = low_signed(f.word[5]);
  const __m256i d = high_signed(f.word[5]);
  const __m256i sum = _mm256_add_epi32(_mm256_add_epi32(a, b), _mm256_add_epi32(c, d));
  const __m256i position = _mm256_add_epi32(a, b);
  const __m256i straw = _mm256_add_epi32(b, d);

  // loki_prepare's checks after the slot's, from the last to the first:
  //   inside = sum > 0 ? (0 ≤ position ≤ sum) : (sum ≤ position ≤ 0)
  const __m256i zero = _mm256_setzero_si256();
  LokiPrepared p;
  const __m256i inside_up = not_mask(
      _mm256_or_si256(_mm256_cmpgt_epi32(zero, position), _mm256_cmpgt_epi32(position, sum)));
  const __m256i inside_down = not_mask(
      _mm256_or_si256(_mm256_cmpgt_epi32(position, zero), _mm256_cmpgt_epi32(sum, position)));
  const __m256i inside = _mm256_blendv_epi8(inside_down, inside_up, _mm256_cmpgt_epi32(sum, zero));
  __m256i status = zero;
  status = fail_where(status, not_mask(inside), error_code(ReadoutError::kPosition));
  status = fail_where(status, _mm256_cmpgt_epi32(_mm256_set1_epi32(map.threshold), sum),
                      error_code(ReadoutError::kAmplitudeLow));
  status =
      fail_where(status, _mm256_cmpeq_epi32(sum, zero), error_code(ReadoutError::kAmplitudeZero));
  status = fail_where(status, _mm256_cmpgt_epi32(group, _mm256_set1_epi32(kLokiGroupsPerFen - 1)),
                      error_code(ReadoutError::kGroup));
  // slot = (ring · 24 + FEN) · 8 + group % 8, ring = fibre / 2
  const __m256i slot = _mm256_andnot_si256(
      f.failed,
      _mm256_add_epi32(
          _mm256_slli_epi32(
              _mm256_add_epi32(_mm256_mullo_epi32(in.ring, _mm256_set1_epi32(kMaxFen + 1)), fen),
              3),
          _mm256_and_si256(group, _mm256_set1_epi32(kLokiGroupsPerFen - 1))));

  _mm256_store_si256(reinterpret_cast<__m256i*>(p.slot_index), slot);
  divide(position, sum, p.pos);
  divide(straw, sum, p.straw_ratio);
  p.status = status;
  return p;
}

/// LoKI's step 3 (see loki()): the cubic, clamp, rounding and pixel (x ≤ 65535 and y, a row
/// plus a unit, below 2^31 on a good lane). Writes the outcome, the pixels and the clamps.
EFU_AVX2 void loki_finish(const LokiLanes& map, const double* pos, const UnitCalibration* const* u,
                          __m256i y, __m256i outcome, Out& out) {
  const Finish4 f0 = finish4(pos, u, 0, map.finish.x_scale);
  const Finish4 f1 = finish4(pos, u, 4, map.finish.x_scale);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out.clamp), _mm256_set_m128i(f1.clamp, f0.clamp));
  write_outcome(out, outcome, grid_pixel(_mm256_set_m128i(f1.x, f0.x), y, map.finish.grid));
}

}  // namespace

// LoKI (pixel_map.h), in three steps over the eight lanes:
//  1. vector: the front's checks; the amplitudes (signed), the group check, the sums' and the
//     position's checks, the two divisions pos = (A + B) / sum and straw = (B + D) / sum, and
//     each lane's slot index (0 where the front failed: its fibre or FEN may be past the table);
//  2. the look-ups, a load per lane each, with vector steps between them: the slot (global group
//     and row), the straw's bucket and its two units' interval ends, the unit chosen as
//     Calibration::Lookup::unit_of does, and the unit's polynomial; the outcome in the scalar
//     order (front, ring, FEN, group and sums, calibration group, outside_interval);
//  3. vector: LokiFinish's cubic, clamp, rounding and pixel; pixel 0 → pixel.
EFU_AVX2 static void loki8(const std::uint8_t* blocks, const TimeRule& time, const LokiLanes& map,
                           Out& out) {
  const Front f = front(blocks, time, out);
  const LokiPrepared p = loki_prepare(f, map);
  const __m256i status = p.status;
  const __m256i zero = _mm256_setzero_si256();

  // 2. The table look-ups, each a plain load per lane between vector steps (no gathers: see
  //    load_words), every index 0 on a lane already rejected, so that none reads outside its
  //    table.
  //    a. The slot: the global group (or no ring / no FEN) and the row.
  PixelMap::LokiSlot slot[kLanes];
  for (std::uint32_t i = 0; i < kLanes; ++i) slot[i] = map.tables.slots[p.slot_index[i]];
  const __m256i g = lanes_u32([&](int i) { return slot[i].group; });
  const __m256i no_ring = _mm256_cmpeq_epi32(g, _mm256_set1_epi32(-1));  // kLokiNoRing
  const __m256i no_fen = _mm256_cmpeq_epi32(g, _mm256_set1_epi32(-2));   // kLokiNoFen
  // g ≥ calibration groups, unsigned: max(g, groups) == g
  const __m256i groups = _mm256_set1_epi32(static_cast<int>(map.tables.calibration_groups));
  const __m256i no_calibration = _mm256_cmpeq_epi32(_mm256_max_epu32(g, groups), g);
  //    b. The straw: Calibration::Lookup::unit_of(g, straw), on the lanes not yet rejected.
  const __m256i rejected =
      _mm256_or_si256(_mm256_or_si256(f.failed, _mm256_or_si256(no_ring, no_fen)),
                      _mm256_or_si256(not_mask(_mm256_cmpeq_epi32(status, zero)), no_calibration));
  const __m256i unit = unit_lanes(map.units, g, p.straw_ratio, not_mask(rejected));

  //    c. The outcome in the scalar order: front, ring, FEN, group and sums, calibration group,
  //       outside_interval (pixel follows in 3).
  __m256i outcome =
      fail_where(zero, _mm256_cmpgt_epi32(zero, unit), error_code(ReadoutError::kOutsideInterval));
  outcome = fail_where(outcome, no_calibration, error_code(ReadoutError::kCalibrationGroup));
  outcome = _mm256_blendv_epi8(outcome, status, not_mask(_mm256_cmpeq_epi32(status, zero)));
  outcome = fail_where(outcome, no_fen, error_code(ReadoutError::kFen));
  outcome = fail_where(outcome, no_ring, error_code(ReadoutError::kRing));
  outcome = _mm256_blendv_epi8(outcome, f.status, f.failed);
  const __m256i good = _mm256_cmpeq_epi32(outcome, zero);

  //    d. The unit's polynomial (index 0 on a rejected lane).
  alignas(32) std::uint32_t unit_index[kLanes];
  _mm256_store_si256(
      reinterpret_cast<__m256i*>(unit_index),
      _mm256_and_si256(
          good, _mm256_add_epi32(_mm256_mullo_epi32(
                                     g, _mm256_set1_epi32(static_cast<int>(map.finish.group_size))),
                                 unit)));
  const UnitCalibration* u[kLanes];
  for (std::uint32_t i = 0; i < kLanes; ++i) u[i] = &map.finish.units[unit_index[i]];
  const __m256i y =
      _mm256_add_epi32(lanes_u32([&](int i) { return slot[i].row; }), _mm256_and_si256(good, unit));

  // 3. The cubic, clamp, rounding and pixel.
  loki_finish(map, p.pos, u, y, outcome, out);
}

namespace {

/// BIFROST's position along the tube for lanes first .. first + 3 (u: each lane's unit):
///   along = width == 0 ? 0 : (ratio − lo) / width, width = hi − lo;  x_local = trunc(along · 99)
/// along is in [0, 1] on a good lane (ratio lies between lo and hi), so x_local ≤ 99.
EFU_AVX2 __m128i bifrost_along4(const double* ratio, const UnitCalibration* const* u, int first) {
  const __m256d lo = lanes_f64([&](int i) { return u[i]->lo; }, first);
  const __m256d width = _mm256_sub_pd(lanes_f64([&](int i) { return u[i]->hi; }, first), lo);
  const __m256d along = _mm256_div_pd(_mm256_sub_pd(_mm256_loadu_pd(ratio + first), lo), width);
  const __m256d zero_width = _mm256_cmp_pd(width, _mm256_setzero_pd(), _CMP_EQ_OQ);
  const __m256d kept = _mm256_blendv_pd(along, _mm256_setzero_pd(), zero_width);
  return _mm256_cvttpd_epi32(
      _mm256_mul_pd(kept, _mm256_set1_pd(static_cast<double>(kBifrostTubePixels - 1))));
}

}  // namespace

// BIFROST (pixel_map.h), over the eight lanes:
//   checks: the front's, then ring, FEN, group, the sum's (limit_checks)
//   ratio = A / (A + B); calibration group g = ring·15 + group: g ≥ groups → calibration_group
//   unit = the calibration's unit of g holding the ratio (unit_lanes): none → outside_interval
//   x = ring·Resolution + (group % 3)·100 + x_local (bifrost_along4); y = (group / 3)·3 + unit
//   pixel = 1 + x + 900·y on the 900 × 15 grid, else pixel; source = g
// group / 3 for group < 2^16 is (group · 43691) >> 17, exactly.
EFU_AVX2 static void bifrost8(const std::uint8_t* blocks, const TimeRule& time,
                              const BifrostLanes& map, Out& out) {
  const Front f = front(blocks, time, out);
  const Fields in = fields(f);
  const __m256i ring = in.ring, group = in.group, a = in.a, sum = in.sum;
  const __m256i checks = limit_checks(map.limits, ring, in.fen, group, sum);
  alignas(32) double ratio[kLanes];
  divide(a, sum, ratio);

  const __m256i zero = _mm256_setzero_si256();
  const __m256i g =
      _mm256_add_epi32(_mm256_mullo_epi32(ring, _mm256_set1_epi32(kBifrostTripletsPerRing)), group);
  const __m256i groups = _mm256_set1_epi32(static_cast<int>(map.groups));
  const __m256i no_calibration = _mm256_cmpeq_epi32(_mm256_max_epu32(g, groups), g);
  const __m256i earlier = _mm256_or_si256(f.failed, not_mask(_mm256_cmpeq_epi32(checks, zero)));
  const __m256i unit =
      unit_lanes(map.calibration, g, ratio, not_mask(_mm256_or_si256(earlier, no_calibration)));
  __m256i outcome =
      fail_where(zero, _mm256_cmpgt_epi32(zero, unit), error_code(ReadoutError::kOutsideInterval));
  outcome = fail_where(outcome, no_calibration, error_code(ReadoutError::kCalibrationGroup));
  outcome = _mm256_blendv_epi8(outcome, checks, not_mask(_mm256_cmpeq_epi32(checks, zero)));
  outcome = _mm256_blendv_epi8(outcome, f.status, f.failed);
  const __m256i good = _mm256_cmpeq_epi32(outcome, zero);

  // The unit's interval as written (index 0 on a rejected lane), then the pixel.
  alignas(32) std::uint32_t g_good[kLanes], unit_good[kLanes];
  _mm256_store_si256(reinterpret_cast<__m256i*>(g_good), _mm256_and_si256(good, g));
  _mm256_store_si256(reinterpret_cast<__m256i*>(unit_good), _mm256_and_si256(good, unit));
  const UnitCalibration* u[kLanes];
  for (std::uint32_t i = 0; i < kLanes; ++i) u[i] = &map.calibration.unit(g_good[i], unit_good[i]);
  const __m256i x_local =
      _mm256_set_m128i(bifrost_along4(ratio, u, 4), bifrost_along4(ratio, u, 0));
  const __m256i third = _mm256_srli_epi32(_mm256_mullo_epi32(group, _mm256_set1_epi32(43691)), 17);
  const __m256i three = _mm256_set1_epi32(kBifrostTubesPerTriplet);
  const __m256i in_triplet = _mm256_sub_epi32(group, _mm256_mullo_epi32(third, three));
  const __m256i x = _mm256_add_epi32(
      _mm256_add_epi32(
          _mm256_mullo_epi32(ring, _mm256_set1_epi32(static_cast<int>(map.resolution))),
          _mm256_mullo_epi32(in_triplet, _mm256_set1_epi32(kBifrostTubePixels))),
      x_local);
  const __m256i y = _mm256_add_epi32(_mm256_mullo_epi32(third, three), unit);
  // 0 ≤ x < 2^31 (ring ≤ 127, Resolution ≤ 65536) and 0 ≤ y ≤ 255 + the unit on a good lane.
  write_outcome(out, outcome, grid_pixel(x, y, kBifrostGrid));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out.source), g);
}

namespace {
/// group / 24 for a group below 256 as (group · 2731) >> 16: 2731 / 2^16 exceeds 1/24 by
/// 1/196608, too little over 255 to carry a remainder of at most 23/24 past the next integer.
constexpr bool divides_by_24(std::uint32_t group) noexcept {
  return ((group * 2731U) >> 16) == group / kCspecGroupsPerRing;
}
constexpr bool every_group_divides() noexcept {
  for (std::uint32_t group = 0; group < 256; ++group) {
    if (!divides_by_24(group)) return false;
  }
  return true;
}
static_assert(kCspecGroupsPerRing == 24 && every_group_divides());
}  // namespace

// CSPEC (pixel_map.h), over the eight lanes:
//   checks: the front's, then ring, FEN, group, the sum's (zero, below the threshold; no MaxAmpl)
//   x = ring·Resolution + (group % 24)·(Resolution / 24)
//   y = ((Resolution − 1)·A) / (A + B), an integer division, done in double: the product is
//       below 2^32 and exact, and for a numerator n < 2^48 and a denominator d < 2^17 the
//       correctly rounded n / d never reaches the integer above the true quotient (it is at
//       least 1/d below it, more than half an ulp there since n + d < 2^53), so truncating it
//       gives the integer quotient
//   pixel = 1 + x + 900·y on the 900 × 180 grid, else pixel
EFU_AVX2 static void cspec8(const std::uint8_t* blocks, const TimeRule& time, const CspecLanes& map,
                            Out& out) {
  const Front f = front(blocks, time, out);
  const Fields in = fields(f);
  const __m256i ring = in.ring, group = in.group, a = in.a, sum = in.sum;
  const __m256i checks = limit_checks(map.limits, ring, in.fen, group, sum);

  const __m256i groups_in =
      _mm256_srli_epi32(_mm256_mullo_epi32(group, _mm256_set1_epi32(2731)), 16);
  const __m256i in_ring = _mm256_sub_epi32(
      group, _mm256_mullo_epi32(groups_in, _mm256_set1_epi32(kCspecGroupsPerRing)));
  const __m256i x = _mm256_add_epi32(_mm256_mullo_epi32(ring, _mm256_set1_epi32(map.resolution)),
                                     _mm256_mullo_epi32(in_ring, _mm256_set1_epi32(map.x_step)));
  const __m256d top = _mm256_set1_pd(static_cast<double>(map.resolution - 1));
  const __m128i y0 = _mm256_cvttpd_epi32(
      _mm256_div_pd(_mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_castsi256_si128(a)), top),
                    _mm256_cvtepi32_pd(_mm256_castsi256_si128(sum))));
  const __m128i y1 = _mm256_cvttpd_epi32(
      _mm256_div_pd(_mm256_mul_pd(_mm256_cvtepi32_pd(_mm256_extracti128_si256(a, 1)), top),
                    _mm256_cvtepi32_pd(_mm256_extracti128_si256(sum, 1))));
  // 0 ≤ x ≤ 127·65536 + 23·2730 and 0 ≤ y ≤ Resolution − 1 on a lane that passed the checks.
  write_outcome(out, _mm256_blendv_epi8(checks, f.status, f.failed),
                grid_pixel(x, _mm256_set_m128i(y1, y0), kCspecGrid));
}

namespace {
/// `kEight` over each of `runs` runs of eight readouts, run r's outcome into out[r]. The rule
/// and the map are copied into locals first: out is written between the runs, and the compiler
/// would otherwise have to assume a store there may change *map, and load and broadcast every
/// limit again for each run; from locals the broadcasts are made once, before the loop.
template <auto kEight, typename Map>
EFU_AVX2 void each_run(const std::uint8_t* blocks, std::uint32_t runs, const TimeRule& time,
                       const Map& map, Out* out) {
  const TimeRule rule = time;
  const Map local = map;
  for (std::uint32_t r = 0; r < runs; ++r) {
    kEight(blocks + std::size_t{r} * kLanes * kReadoutSize, rule, local, out[r]);
  }
}
}  // namespace

[[gnu::target("avx2")]] void miracles(const std::uint8_t* blocks, std::uint32_t runs,
                                      const TimeRule& time, const MiraclesLanes& map,
                                      Out* out) noexcept {
  each_run<miracles8>(blocks, runs, time, map, out);
}
[[gnu::target("avx2")]] void bifrost(const std::uint8_t* blocks, std::uint32_t runs,
                                     const TimeRule& time, const BifrostLanes& map,
                                     Out* out) noexcept {
  each_run<bifrost8>(blocks, runs, time, map, out);
}
[[gnu::target("avx2")]] void cspec(const std::uint8_t* blocks, std::uint32_t runs,
                                   const TimeRule& time, const CspecLanes& map, Out* out) noexcept {
  each_run<cspec8>(blocks, runs, time, map, out);
}
[[gnu::target("avx2")]] void loki(const std::uint8_t* blocks, std::uint32_t runs,
                                  const TimeRule& time, const LokiLanes& map, Out* out) noexcept {
  each_run<loki8>(blocks, runs, time, map, out);
}

#undef EFU_AVX2

#else  // not x86-64: no lanes

bool available() noexcept { return false; }
MiraclesLanes MiraclesLanes::of(const PixelMap::MiraclesMap& map) noexcept {
  return MiraclesLanes{Limits{}, map.half};
}
CspecLanes CspecLanes::of(const PixelMap::CspecMap& map) noexcept {
  return CspecLanes{Limits{}, static_cast<std::int32_t>(map.resolution), 0};
}
void cspec(const std::uint8_t*, std::uint32_t, const TimeRule&, const CspecLanes&, Out*) noexcept {}
void miracles(const std::uint8_t*, std::uint32_t, const TimeRule&, const MiraclesLanes&,
              Out*) noexcept {}
LokiLanes LokiLanes::of(const PixelMap& map) noexcept {
  return LokiLanes{map.loki_tables(), 0, map.unit_lookup(), map.loki_finish()};
}
BifrostLanes BifrostLanes::of(const PixelMap::BifrostMap& map) noexcept {
  return BifrostLanes{Limits{}, map.resolution, map.groups, map.calibration};
}
void bifrost(const std::uint8_t*, std::uint32_t, const TimeRule&, const BifrostLanes&,
             Out*) noexcept {}
void loki(const std::uint8_t*, std::uint32_t, const TimeRule&, const LokiLanes&, Out*) noexcept {}

#endif

}  // namespace efu::caen::lanes
