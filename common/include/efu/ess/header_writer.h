// Writes an ESS readout header: for generators and tests, the inverse of HeaderParser.
#pragma once

#include <cstdint>

#include "efu/ess/byte_reader.h"
#include "efu/ess/ess_time.h"
#include "efu/ess/readout_header.h"

namespace efu::ess {

struct HeaderFields {
  std::uint8_t version = 1;
  std::uint8_t type = 0;
  std::uint16_t total_length = 0;
  std::uint8_t output_queue = 0;
  std::uint8_t time_source = 0;
  EssTime pulse{0, 0};
  EssTime prev_pulse{0, 0};
  std::uint32_t sequence = 0;
};

constexpr std::uint32_t header_size(std::uint8_t version) noexcept {
  return version == 0 ? kHeaderSizeV0 : kHeaderSizeV1;
}

/// Writes header_size(fields.version) bytes at `out`.
inline void write_header(std::uint8_t* out, const HeaderFields& fields) noexcept {
  out[0] = 0;
  out[1] = fields.version;
  out[2] = 'E';
  out[3] = 'S';
  out[4] = 'S';
  out[5] = fields.type;
  store_u16(out + 6, fields.total_length);
  out[8] = fields.output_queue;
  out[9] = fields.time_source;
  store_u32(out + 10, fields.pulse.high);
  store_u32(out + 14, fields.pulse.low);
  store_u32(out + 18, fields.prev_pulse.high);
  store_u32(out + 22, fields.prev_pulse.low);
  store_u32(out + 26, fields.sequence);
  if (fields.version != 0) {
    out[30] = 0;
    out[31] = 0;
  }
}

}  // namespace efu::ess
