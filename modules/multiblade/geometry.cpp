#include "geometry.h"

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "efu/errors.h"

namespace efu::multiblade {
namespace {

using Json = nlohmann::json;

class Reader {
 public:
  explicit Reader(const std::string& origin) : origin_(origin) {}

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw ConfigError("multiblade geometry '" + origin_ + "': " + key + ": " + what);
  }

  const Json& member(const Json& object, const std::string& path, const char* key) const {
    if (!object.is_object()) fail(path, "is not an object; expected an object");
    auto it = object.find(key);
    if (it == object.end()) fail(join(path, key), "is missing");
    return *it;
  }

  std::uint32_t integer(const Json& object, const std::string& path, const char* key,
                        std::uint32_t min, std::uint32_t max) const {
    const Json& value = member(object, path, key);
    const std::string full = join(path, key);
    if (!value.is_number_integer()) {
      fail(full,
           std::string("'") + value.dump() + "' is not an integer; expected " + range(min, max));
    }
    const auto v = value.get<std::int64_t>();
    if (v < min || v > max)
      fail(full,
           std::string("'") + value.dump() + "' is out of range; expected " + range(min, max));
    return static_cast<std::uint32_t>(v);
  }

  static std::string join(const std::string& path, const char* key) {
    return path.empty() ? std::string(key) : path + "." + key;
  }

 private:
  static std::string range(std::uint32_t min, std::uint32_t max) {
    return std::to_string(min) + ".." + std::to_string(max);
  }
  std::string origin_;
};

}  // namespace

Geometry Geometry::from_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    throw ConfigError("--geometry: '" + path + "' cannot be read; expected a readable JSON file");
  }
  std::stringstream text;
  text << in.rdbuf();
  return from_json(text.str(), path);
}

Geometry Geometry::from_json(std::string_view text, const std::string& origin) {
  const Reader reader(origin);
  Json root;
  try {
    root = Json::parse(text);
  } catch (const Json::parse_error& e) {
    reader.fail("(document)",
                std::string("is not valid JSON (") + e.what() + "); expected a JSON object");
  }
  if (!root.is_object()) reader.fail("(document)", "is not an object; expected a JSON object");

  Geometry g;
  if (auto it = root.find("name"); it != root.end()) {
    if (!it->is_string()) reader.fail("name", "is not a string; expected a string");
    g.name_ = it->get<std::string>();
  }
  g.wires_ = reader.integer(root, "", "wires_per_cassette", 1, kChannelsPerVmm);
  g.strips_ = reader.integer(root, "", "strips_per_cassette", 1, kChannelsPerVmm);
  const Json& cassettes = reader.member(root, "", "cassettes");
  if (!cassettes.is_array() || cassettes.empty() || cassettes.size() > kMaxCassettes) {
    reader.fail("cassettes",
                "expected an array of 1.." + std::to_string(kMaxCassettes) + " cassettes");
  }
  g.locations_.resize(cassettes.size());
  std::vector<bool> id_seen(cassettes.size(), false);

  // First pass: read every plane location and size the table from the highest values used.
  for (std::size_t i = 0; i < cassettes.size(); ++i) {
    const std::string path = "cassettes[" + std::to_string(i) + "]";
    const Json& c = cassettes[i];
    const std::uint32_t id =
        reader.integer(c, path, "id", 0, static_cast<std::uint32_t>(cassettes.size() - 1));
    if (id_seen[id])
      reader.fail(path + ".id",
                  "'" + std::to_string(id) + "' is used twice; expected unique ids 0..n-1");
    id_seen[id] = true;
    const char* plane_keys[2] = {"wires", "strips"};
    const std::uint32_t counts[2] = {g.wires_, g.strips_};
    for (unsigned p = 0; p < 2; ++p) {
      const Json& plane = reader.member(c, path, plane_keys[p]);
      const std::string ppath = path + "." + plane_keys[p];
      PlaneLocation loc{};
      loc.fiber =
          static_cast<std::uint8_t>(reader.integer(plane, ppath, "fiber", 0, kMaxFibers - 1));
      loc.fen = static_cast<std::uint8_t>(reader.integer(plane, ppath, "fen", 0, kMaxFens - 1));
      loc.vmm = static_cast<std::uint8_t>(reader.integer(plane, ppath, "vmm", 0, kMaxVmms - 1));
      loc.first_channel = static_cast<std::uint8_t>(
          reader.integer(plane, ppath, "first_channel", 0, kChannelsPerVmm - counts[p]));
      g.locations_[id][p] = loc;
      g.fibers_ = std::max<std::uint32_t>(g.fibers_, loc.fiber + 1U);
      g.fens_ = std::max<std::uint32_t>(g.fens_, loc.fen + 1U);
      g.vmms_ = std::max<std::uint32_t>(g.vmms_, loc.vmm + 1U);
    }
  }

  g.fen_used_.assign(g.fibers_ * g.fens_, 0);
  g.vmm_used_.assign(g.fibers_ * g.fens_ * g.vmms_, 0);
  g.table_.assign(g.fibers_ * g.fens_ * g.vmms_ * kChannelsPerVmm,
                  ChannelMapping{kNoCassette, Plane::kWire, 0});
  for (std::uint32_t id = 0; id < g.cassettes(); ++id) {
    for (unsigned p = 0; p < 2; ++p) {
      const PlaneLocation& loc = g.locations_[id][p];
      const std::uint32_t fen_index = loc.fiber * g.fens_ + loc.fen;
      const std::uint32_t vmm_index = fen_index * g.vmms_ + loc.vmm;
      g.fen_used_[fen_index] = 1;
      g.vmm_used_[vmm_index] = 1;
      const std::uint32_t count = p == 0 ? g.wires_ : g.strips_;
      for (std::uint32_t k = 0; k < count; ++k) {
        ChannelMapping& m = g.table_[vmm_index * kChannelsPerVmm + loc.first_channel + k];
        if (m.cassette != kNoCassette) {
          reader.fail("cassettes (id " + std::to_string(id) + ")." + (p == 0 ? "wires" : "strips"),
                      "channel " + std::to_string(loc.first_channel + k) + " of fiber " +
                          std::to_string(loc.fiber) + " fen " + std::to_string(loc.fen) + " vmm " +
                          std::to_string(loc.vmm) + " is already mapped to cassette " +
                          std::to_string(m.cassette) + "; expected each channel mapped once");
        }
        m = ChannelMapping{static_cast<std::uint8_t>(id), static_cast<Plane>(p),
                           static_cast<std::uint16_t>(k)};
      }
    }
  }
  return g;
}

}  // namespace efu::multiblade
