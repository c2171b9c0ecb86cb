// The lanes of readout_lanes.h with AVX2. Every function here carries gnu::target("avx2") and
// has internal linkage (or is the header's entry point), so the rest of the program stays
// baseline x86-64.
//
// Each step says which scalar line it is (ReadoutParser::timed, PixelMap::MiraclesMap). A lane
// holds one readout; a status vector starts at kOk and each check, from the last to the first,
// overwrites it where it fails, so that the first failing check is the one a lane reports, as
// the scalar code's early returns do. The arithmetic of a rejected lane goes on with whatever
// its values are (a division by zero, an out-of-range conversion): its results are never read.
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

/// Unsigned 64-bit a > b: the signed compare with both sign bits flipped.
EFU_AVX2 __m256i greater_u64(__m256i a, __m256i b) {
  const __m256i sign = _mm256_set1_epi64x(std::numeric_limits<std::int64_t>::min());
  return _mm256_cmpgt_epi64(_mm256_xor_si256(a, sign), _mm256_xor_si256(b, sign));
}

/// Two 4-lane 64-bit masks (lanes 0–3, 4–7) as one 8-lane 32-bit mask: each lane's low half.
EFU_AVX2 __m256i narrow(__m256i low_lanes, __m256i high_lanes) {
  const __m256i evens = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
  const __m256i a = _mm256_permutevar8x32_epi32(low_lanes, evens);
  const __m256i b = _mm256_permutevar8x32_epi32(high_lanes, evens);
  return _mm256_inserti128_si256(a, _mm256_castsi256_si128(b), 1);
}

/// The 32-bit words 0..4 of eight 24-byte readouts from `blocks`, word w of readout i in lane i
/// of word[w]. By loads and a transpose, not vpgatherdd: with the microcode against Gather Data
/// Sampling (Downfall), which these Xeons run, a gather took half of the lanes' time.
///
/// A 256-bit register holds 16 bytes of readout i in its low half and of readout i + 4 in its
/// high half; four such (i = 0..3) are transposed as two 4 × 4 matrices of words at once
/// (unpack 32, then 64 bits), which leaves word w of readouts 0..3 | 4..7 in one register.
/// Words 0..3 come from each readout's bytes 0..15, word 4 from its bytes 8..23.
struct Words {
  __m256i word[5];  // fibre|fen|length, time_high, time_low, flags|group|unused, A|B
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
  return Time4{reference, tof, negative, too_large};
}

/// The checks every instrument makes first, for eight lanes, and the reference pulse and TOF
/// written to `out`. ReadoutBlockWalker: data_length == 24; ReadoutParser::timed: fibre ≤ 23,
/// FEN ≤ 23, time_low ≤ kMaxTimeLow, then the TOF. Returns the lanes' status so far, to be
/// overwritten by the formula's checks where these passed; `words` the readouts' words 0..4.
struct Front {
  __m256i status;   // the status of the checks above where one failed, else kOk
  __m256i failed;   // the lanes one of them rejected
  __m256i word[5];  // fibre|fen|length, time_high, time_low, flags|group|unused, A|B
};
EFU_AVX2 Front front(const std::uint8_t* blocks, const TimeRule& rule, Out& out) {
  Front f;
  const Words words = load_words(blocks);
  for (int w = 0; w < 5; ++w) f.word[w] = words.word[w];
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
  // The mask's 64-bit lanes → 32-bit: −1 where rounding up; i − (−1) = i + 1.
  const __m128i up32 = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(
      _mm256_castpd_si256(up), _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7)));
  return _mm_sub_epi32(i, up32);
}

}  // namespace

MiraclesLanes MiraclesLanes::of(const PixelMap::MiraclesMap& map) noexcept {
  constexpr std::int64_t kMax = std::numeric_limits<std::int32_t>::max();
  return MiraclesLanes{
      static_cast<std::int32_t>(std::min<std::int64_t>(map.max_ring, kMax)), map.half,
      static_cast<std::int32_t>(std::clamp<std::int64_t>(map.limits.max_amplitude, -1, kMax)),
      static_cast<std::int32_t>(std::clamp<std::int64_t>(map.limits.threshold, 0, kMax))};
}

// PixelMap::MiraclesMap::operator(), lane by lane:
//   ring = fibre / 2 > MaxRing                → ring
//   sum = A + B: 0 → amplitude_zero; > MaxAmpl → amplitude_high; < threshold → amplitude_low
//   tube B = A < B; p = float(A / sum); h = half − 1
//   x = 2·group + (24 if ring is 1 or 3) + tube B
//   y = (half if ring is 2 or 3) + (tube B ? trunc(p·2·h) in float : round(h − (p − 0.5)·2·h))
//   pixel = 1 + x + 48·y, or pixel when (x, y) is off the 48 × 128 grid
[[gnu::target("avx2")]] void miracles(const std::uint8_t* blocks, const TimeRule& time,
                                      const MiraclesLanes& map, Out& out) noexcept {
  const Front f = front(blocks, time, out);
  const __m256i byte = _mm256_set1_epi32(0xFF);
  const __m256i ring = _mm256_srli_epi32(_mm256_and_si256(f.word[0], byte), 1);
  const __m256i group = _mm256_and_si256(_mm256_srli_epi32(f.word[3], 8), byte);
  const __m256i a = _mm256_and_si256(f.word[4], _mm256_set1_epi32(0xFFFF));
  const __m256i b = _mm256_srli_epi32(f.word[4], 16);
  const __m256i sum = _mm256_add_epi32(a, b);

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
  const __m256i y =
      _mm256_add_epi32(_mm256_and_si256(ring_high, _mm256_set1_epi32(map.half)), along);
  // x, y ≥ 0 (h ≥ 0), so off the grid is x > 47 or y > 127.
  const __m256i off_grid = _mm256_or_si256(
      _mm256_cmpgt_epi32(x, _mm256_set1_epi32(static_cast<int>(kMiraclesGrid.nx - 1))),
      _mm256_cmpgt_epi32(y, _mm256_set1_epi32(static_cast<int>(kMiraclesGrid.ny - 1))));
  const __m256i pixel = _mm256_add_epi32(
      _mm256_add_epi32(x, _mm256_set1_epi32(1)),
      _mm256_mullo_epi32(y, _mm256_set1_epi32(static_cast<int>(kMiraclesGrid.nx))));

  // From the last check to the first; the front's outcome wins where it failed.
  __m256i status = _mm256_setzero_si256();
  status = fail_where(status, off_grid, error_code(ReadoutError::kPixel));
  status = fail_where(status, _mm256_cmpgt_epi32(_mm256_set1_epi32(map.threshold), sum),
                      error_code(ReadoutError::kAmplitudeLow));
  status = fail_where(status, _mm256_cmpgt_epi32(sum, _mm256_set1_epi32(map.max_amplitude)),
                      error_code(ReadoutError::kAmplitudeHigh));
  status = fail_where(status, _mm256_cmpeq_epi32(sum, _mm256_setzero_si256()),
                      error_code(ReadoutError::kAmplitudeZero));
  status = fail_where(status, _mm256_cmpgt_epi32(ring, _mm256_set1_epi32(map.max_ring)),
                      error_code(ReadoutError::kRing));
  status = _mm256_blendv_epi8(status, f.status, f.failed);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out.status), status);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out.pixel), pixel);
}

#undef EFU_AVX2

#else  // not x86-64: no lanes

bool available() noexcept { return false; }
MiraclesLanes MiraclesLanes::of(const PixelMap::MiraclesMap& map) noexcept {
  return MiraclesLanes{0, map.half, 0, 0};
}
void miracles(const std::uint8_t*, const TimeRule&, const MiraclesLanes&, Out&) noexcept {}

#endif

}  // namespace efu::caen::lanes
