// libFuzzer target for the CBM config loader (tests/cbm/CMakeLists.txt says how to build it;
// seeds in tests/fuzz/corpus/cbm_config/): the input is the config file's text. A bad file must
// be one ConfigError, never another exception or a crash; a config that loads must build a
// pipeline (every da00 histogram's spec accepted) and take a readout for every monitor.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "cbm_pipeline.h"
#include "cbm_readout.h"
#include "efu/errors.h"
#include "efu/ess/ess_time.h"
#include "efu/ess/header_writer.h"

namespace {

class NullSink final : public efu::EventSink {
 public:
  void add(std::uint64_t, std::uint32_t, std::uint32_t) override { ++events; }
  std::uint64_t events = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  efu::cbm::CbmConfig config;
  try {
    config = efu::cbm::load_config_json(text, "fuzz.json");
  } catch (const efu::ConfigError&) {
    return 0;
  }
  if (config.monitors.empty()) std::abort();
  // Bound the work of one input: a few monitors' histograms are enough.
  if (config.monitors.size() > 64) return 0;
  std::uint64_t bins = 0;
  for (const auto& m : config.monitors) bins += static_cast<std::uint64_t>(m.bin_count);
  if (bins > (1U << 22)) return 0;

  efu::OptionValues options;
  efu::CounterRegistry counters;
  NullSink sink;
  auto shared = efu::cbm::make_shared(std::move(config));
  efu::cbm::CbmPipeline pipeline(
      *shared, efu::PipelineContext{options, counters, sink, 0, 1, shared.get(), nullptr});

  // One packet with a readout for every monitor, of its type, on the monitor ring, 1 µs after
  // the pulse (position 0,0; NADC 100 over 2).
  const std::uint64_t pulse_ns = 1'700'000'000'000'000'000ULL;
  const efu::cbm::CbmConfig& c = shared->config;
  std::vector<std::uint8_t> packet(efu::ess::kHeaderSizeV1 +
                                   c.monitors.size() * efu::cbm::kReadoutSize);
  std::size_t at = efu::ess::kHeaderSizeV1;
  for (const auto& m : c.monitors) {
    efu::cbm::CbmReadout r;
    r.fiber = static_cast<std::uint8_t>(c.monitor_ring * 2);
    r.fen = m.fen;
    r.channel = m.channel;
    r.type = static_cast<std::uint8_t>(m.type);
    const efu::ess::EssTime t = efu::ess::to_ess(pulse_ns + 1000);
    r.time_high = t.high;
    r.time_low = t.low;
    if (m.type == efu::cbm::MonitorType::kIbm) r.set_ibm(100, 2);
    efu::cbm::write_readout(packet.data() + at, r);
    at += efu::cbm::kReadoutSize;
  }
  efu::ess::HeaderFields f;
  f.type = efu::cbm::detector_type(c.instrument);
  f.total_length = static_cast<std::uint16_t>(packet.size());
  f.pulse = efu::ess::to_ess(pulse_ns);
  f.prev_pulse = f.pulse;  // no pulse-time difference, whatever MaxPulseTimeDiffNS says
  efu::ess::write_header(packet.data(), f);
  const efu::PacketView view{packet.data(), static_cast<std::uint32_t>(packet.size())};
  pipeline.process(efu::PacketBatch(&view, 1));
  pipeline.flush();
  // Each monitor's readout is accepted or rejected by a time rule only (tof_too_large with a
  // MaxTOFNS under 1 µs; tof_beyond_period with a MaxTofBin under it).
  std::uint64_t accepted = 0;
  for (const char* a : efu::cbm::kAcceptedNames) {
    accepted += counters.value(std::string("readouts.accepted.") + a);
  }
  const std::uint64_t timed_out = counters.value("readouts.errors.tof_too_large") +
                                  counters.value("readouts.errors.tof_beyond_period");
  if (accepted + timed_out != c.monitors.size()) std::abort();
  return 0;
}
