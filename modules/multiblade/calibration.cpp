#include "calibration.h"

#include "efu/json_config.h"

namespace efu::multiblade {
namespace {

constexpr const char* kWhat = "multiblade calibration";

// The reference starts every channel of every hybrid at offset 0 and slope 1 (VMM3Calibration's
// InitCal) and a file overwrites only the hybrids it names, so a hybrid the file leaves out keeps
// exactly these: its ADC passes unchanged and its TDC term is the nominal one.
constexpr ChannelCalibration kIdentity{0.0, 1.0, 0.0, 1.0};

void check_header(const JsonNode& root) {
  if (!root.is_object()) root.fail("is not an object; expected the calibration object");
  const JsonNode detector = root.at("Detector");
  if (detector.as_string() != "Freia") {
    detector.fail("\"" + detector.as_string() +
                  "\" is not the geometry's detector; expected \"Freia\"");
  }
  const JsonNode version = root.at("Version");
  if (version.as_int(0, 1'000'000) != 1) version.fail("is not 1; expected version 1");
}

// One VMM's four arrays of 64 values into its 64 channels.
void load_vmm(const JsonNode& v, ChannelCalibration* channels) {
  if (!v.is_object()) v.fail("is not an object; expected one VMM's calibration");
  v.check_keys({"Settings", "adc_offset", "adc_slope", "tdc_offset", "tdc_slope"});
  double ChannelCalibration::* const fields[] = {
      &ChannelCalibration::adc_offset, &ChannelCalibration::adc_slope,
      &ChannelCalibration::tdc_offset, &ChannelCalibration::tdc_slope};
  const char* const keys[] = {"adc_offset", "adc_slope", "tdc_offset", "tdc_slope"};
  for (unsigned k = 0; k < 4; ++k) {
    const auto values = v.at(keys[k]).elements(kChannelsPerVmm, kChannelsPerVmm);
    for (std::uint32_t ch = 0; ch < kChannelsPerVmm; ++ch) {
      channels[ch].*fields[k] = values[ch].as_double(-1e6, 1e6);
    }
  }
}

// One Calibrations[] entry: its HybridId must be in the geometry and not seen before (`seen` is
// then marked at its Config[] index), and its two VMMs are loaded into `channels`.
void load_entry(const JsonNode& entry, const Geometry& geometry,
                         std::vector<std::uint8_t>& seen,
                         std::vector<ChannelCalibration>& channels) {
  if (!entry.is_object()) entry.fail("is not an object; expected {\"VMMHybridCalibration\": ...}");
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
  const int found = geometry.find_hybrid(text);
  if (found < 0) {
    id.fail("\"" + text + "\" is not in the " + geometry.origin() +
            "; expected one of its HybridIds");
  }
  const auto index = static_cast<std::uint32_t>(found);
  if (seen[index] != 0) id.fail("\"" + text + "\" is calibrated twice; expected each hybrid once");
  seen[index] = 1;
  hybrid.get_string("CalibrationDate");
  for (std::uint32_t vmm = 0; vmm < 2; ++vmm) {
    load_vmm(hybrid.at(vmm == 0 ? "vmm0" : "vmm1"),
             &channels[(std::size_t{index} * 2 + vmm) * kChannelsPerVmm]);
  }
}

// The hybrids no entry named, in Config[] order; with kRefuse the first is an error.
std::vector<std::uint32_t> missing_hybrids(const JsonNode& list, const Geometry& geometry,
                                           const std::vector<std::uint8_t>& seen,
                                           MissingHybrids missing) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t i = 0; i < geometry.cassettes(); ++i) {
    if (seen[i] != 0) continue;
    if (missing == MissingHybrids::kRefuse) {
      list.fail("has no entry for HybridId \"" + geometry.cassette(i).hybrid_id + "\" (cassette " +
                std::to_string(geometry.cassette(i).cassette_number) +
                "); expected every hybrid of the instrument config, or --calibration off");
    }
    out.push_back(i);
  }
  return out;
}

void load(const JsonDocument& doc, const Geometry& geometry, MissingHybrids missing,
          std::vector<ChannelCalibration>& channels, std::vector<std::uint32_t>& uncalibrated) {
  const JsonNode root = doc.root();
  check_header(root);
  channels.assign(std::size_t{geometry.cassettes()} * 2 * kChannelsPerVmm, kIdentity);
  std::vector<std::uint8_t> seen(geometry.cassettes(), 0);
  const JsonNode list = root.at("Calibrations");
  for (const JsonNode& entry : list.elements()) load_entry(entry, geometry, seen, channels);
  uncalibrated = missing_hybrids(list, geometry, seen, missing);
}

}  // namespace

Calibration Calibration::from_file(const std::string& path, const Geometry& geometry,
                                   MissingHybrids missing) {
  Calibration c;
  load(JsonDocument::from_file(path, kWhat), geometry, missing, c.channels_, c.uncalibrated_);
  c.file_ = path;
  return c;
}

Calibration Calibration::from_json(std::string_view text, const std::string& origin,
                                   const Geometry& geometry, MissingHybrids missing) {
  Calibration c;
  load(JsonDocument::from_text(text, kWhat, origin), geometry, missing, c.channels_,
       c.uncalibrated_);
  c.file_ = origin;
  return c;
}

std::string Calibration::uncalibrated_warning(const Geometry& geometry) const {
  if (uncalibrated_.empty()) return "";
  const std::size_t n = uncalibrated_.size();
  std::string line = "multiblade: " + std::to_string(n) + " of " +
                     std::to_string(geometry.cassettes()) +
                     (n == 1 ? " hybrids has" : " hybrids have") + " no calibration in '" + file_ +
                     (n == 1 ? "' and runs" : "' and run") +
                     " uncalibrated (ADC unchanged; TDC term with offset 0 and slope 1, as the "
                     "reference does; --calibration-strict on refuses the file):";
  const char* separator = " ";
  for (const std::uint32_t i : uncalibrated_) {
    const CassetteConfig& c = geometry.cassette(i);
    line += separator;
    line += "cassette " + std::to_string(c.cassette_number) + " (HybridId " + c.hybrid_id + ")";
    separator = ", ";
  }
  return line;
}

}  // namespace efu::multiblade
