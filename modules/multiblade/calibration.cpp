#include "calibration.h"

#include "efu/json_config.h"

namespace efu::multiblade {
namespace {

constexpr const char* kWhat = "multiblade calibration";

void load(const JsonDocument& doc, const Geometry& geometry,
          std::vector<ChannelCalibration>& channels) {
  const JsonNode root = doc.root();
  if (!root.is_object()) root.fail("is not an object; expected the calibration object");
  const JsonNode detector = root.at("Detector");
  if (detector.as_string() != "Freia") {
    detector.fail("\"" + detector.as_string() +
                  "\" is not the geometry's detector; expected \"Freia\"");
  }
  const JsonNode version = root.at("Version");
  if (version.as_int(0, 1'000'000) != 1) version.fail("is not 1; expected version 1");

  channels.assign(std::size_t{geometry.cassettes()} * 2 * kChannelsPerVmm,
                  ChannelCalibration{0.0, 1.0, 0.0, 1.0});
  std::vector<std::uint8_t> seen(geometry.cassettes(), 0);
  const JsonNode list = root.at("Calibrations");
  for (const JsonNode& entry : list.elements()) {
    if (!entry.is_object())
      entry.fail("is not an object; expected {\"VMMHybridCalibration\": ...}");
    entry.check_keys({"VMMHybridCalibration"});
    const JsonNode hybrid = entry.at("VMMHybridCalibration");
    if (!hybrid.is_object()) hybrid.fail("is not an object; expected a hybrid's calibration");
    hybrid.check_keys({"HybridId", "CalibrationDate", "vmm0", "vmm1"});
    const JsonNode id = hybrid.at("HybridId");
    const std::string& text = id.as_string();
    if (text.size() != kHybridIdLength) {
      id.fail("\"" + text + "\" has " + std::to_string(text.size()) + " characters; expected " +
              std::to_string(kHybridIdLength));
    }
    const int index = geometry.find_hybrid(text);
    if (index < 0) {
      id.fail("\"" + text + "\" is not in the " + geometry.origin() +
              "; expected one of its HybridIds");
    }
    if (seen[static_cast<std::size_t>(index)] != 0) {
      id.fail("\"" + text + "\" is calibrated twice; expected each hybrid once");
    }
    seen[static_cast<std::size_t>(index)] = 1;
    hybrid.get_string("CalibrationDate");
    for (unsigned vmm = 0; vmm < 2; ++vmm) {
      const JsonNode v = hybrid.at(vmm == 0 ? "vmm0" : "vmm1");
      if (!v.is_object()) v.fail("is not an object; expected one VMM's calibration");
      v.check_keys({"Settings", "adc_offset", "adc_slope", "tdc_offset", "tdc_slope"});
      const char* const keys[] = {"adc_offset", "adc_slope", "tdc_offset", "tdc_slope"};
      for (unsigned k = 0; k < 4; ++k) {
        const auto values = v.at(keys[k]).elements(kChannelsPerVmm, kChannelsPerVmm);
        for (std::uint32_t ch = 0; ch < kChannelsPerVmm; ++ch) {
          const double x = values[ch].as_double(-1e6, 1e6);
          ChannelCalibration& c =
              channels[(static_cast<std::size_t>(index) * 2 + vmm) * kChannelsPerVmm + ch];
          (k == 0 ? c.adc_offset : k == 1 ? c.adc_slope : k == 2 ? c.tdc_offset : c.tdc_slope) = x;
        }
      }
    }
  }
  for (std::uint32_t i = 0; i < geometry.cassettes(); ++i) {
    if (seen[i] == 0) {
      list.fail("has no entry for HybridId \"" + geometry.cassette(i).hybrid_id + "\" (cassette " +
                std::to_string(geometry.cassette(i).cassette_number) +
                "); expected every hybrid of the instrument config, or --calibration off");
    }
  }
}

}  // namespace

Calibration Calibration::from_file(const std::string& path, const Geometry& geometry) {
  Calibration c;
  load(JsonDocument::from_file(path, kWhat), geometry, c.channels_);
  return c;
}

Calibration Calibration::from_json(std::string_view text, const std::string& origin,
                                   const Geometry& geometry) {
  Calibration c;
  load(JsonDocument::from_text(text, kWhat, origin), geometry, c.channels_);
  return c;
}

}  // namespace efu::multiblade
