// libFuzzer target for the CDT readout path as far as it exists (tests/cdt/CMakeLists.txt says
// how to build it; seeds in tests/fuzz/corpus/cdt_readout/): the first byte picks the instrument
// (its shipped instrument file), the rest is the bytes after an ESS header. They are walked as
// 16-byte CDT blocks, each decoded and mapped to a pixel. It must never read outside the bytes,
// never give a pixel outside the instrument's space (or 0 with kOk), and account for every
// block exactly once: received = length + truncated errors + pixels + pixel errors.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "cdt_readout.h"
#include "config.h"
#include "efu/counter_group.h"
#include "efu/counters.h"
#include "efu/ess/readout_blocks.h"
#include "geometry.h"

namespace {

const efu::cdt::CdtConfig& instrument(unsigned index) {
  static const std::vector<efu::cdt::CdtConfig> all = [] {
    std::vector<efu::cdt::CdtConfig> out;
    for (const char* name : {"DreamInst.json", "MagicInst.json", "HeimdalInst.json"}) {
      out.push_back(efu::cdt::CdtConfig::from_file(std::string(EFU_CDT_CONFIGS_DIR) + "/" + name));
    }
    return out;
  }();
  return all[index % all.size()];
}

struct Harness {
  efu::CounterRegistry counters;
  efu::ess::ReadoutBlockWalker blocks{counters, efu::cdt::kReadoutSize};
  efu::Counter& pixels = counters.counter("events.formed");
  efu::CounterGroup<efu::cdt::PixelStatus, efu::cdt::kPixelErrors> errors{
      counters, "readouts.errors.", efu::cdt::kPixelErrorNames};
};

std::uint64_t outcomes(const efu::CounterRegistry& c) {
  std::uint64_t total = c.value("events.formed");
  for (const char* name : efu::ess::kBlockErrorNames) {
    total += c.value(std::string("readouts.errors.") + name);
  }
  for (const char* name : efu::cdt::kPixelErrorNames) {
    total += c.value(std::string("readouts.errors.") + name);
  }
  return total;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1 || size > 9000) return 0;
  const efu::cdt::CdtConfig& config = instrument(data[0]);
  const std::uint32_t count = efu::cdt::pixel_count(config.instrument);
  Harness h;
  // A copy of exactly the bytes, so ASan sees any read past their end.
  const std::vector<std::uint8_t> bytes(data + 1, data + size);
  h.blocks.walk(bytes.data(), static_cast<std::uint32_t>(bytes.size()),
                [&](const efu::ess::ReadoutBlock& block) {
                  const efu::cdt::CdtReadout r = efu::cdt::read_readout(block.data);
                  const efu::cdt::PixelResult p = efu::cdt::pixel(config.modules, r);
                  if (p.status == efu::cdt::PixelStatus::kOk) {
                    if (p.pixel == 0 || p.pixel > count) std::abort();
                    h.pixels.add();
                  } else {
                    if (p.pixel != 0 || p.status > efu::cdt::PixelStatus::kOk) std::abort();
                    h.errors[p.status].add();
                  }
                });
  if (outcomes(h.counters) != h.counters.value("readouts.received")) std::abort();
  return 0;
}
