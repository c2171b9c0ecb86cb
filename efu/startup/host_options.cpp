#include "startup/host_options.h"

#include <chrono>
#include <deque>
#include <fstream>
#include <map>
#include <sstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "efu/errors.h"
#include "ops/command_port.h"
#include "startup/settings.h"

namespace efu {
namespace {

// An option that fills a settings field takes its default from that field's default, so each
// value is written once (in the struct) and --help shows what an unset option gives. The texts
// are made once, when this file's statics are initialised, and live as long as the program.
const HostSettings kDefault;
const CommandPortConfig kCommandDefault;

const char* text(std::string value) {
  static std::deque<std::string> texts;  // a deque: earlier texts stay where they are
  return texts.emplace_back(std::move(value)).c_str();
}
template <typename Int>
const char* integer(Int value) {
  return text(std::to_string(value));
}
const char* number(double value) { return text(fmt::format("{}", value)); }
const char* seconds(std::chrono::duration<double> value) { return number(value.count()); }
const char* on_off(bool value) { return value ? "on" : "off"; }

const OptionSpec kHostOptions[] = {
    {"bind", OptionType::kString, text(kDefault.socket.bind_address),
     "Address to receive on: IPv4 or IPv6; a multicast group is joined"},
    {"port", OptionType::kInt, integer(kDefault.socket.port), "UDP port to receive on"},
    {"multicast-interface", OptionType::kString, text(kDefault.socket.multicast_interface),
     "Interface name for a multicast join (empty: the kernel chooses)"},
    {"receive-backend", OptionType::kString, kDefault.af_xdp ? "af_xdp" : "socket",
     "socket (recvmmsg) or af_xdp (AF_XDP socket on --interface; needs CAP_NET_ADMIN)"},
    {"interface", OptionType::kString, text(kDefault.xdp.interface),
     "af_xdp: the network interface to receive on"},
    {"queue", OptionType::kInt, integer(kDefault.xdp.queue),
     "af_xdp: the interface's receive queue to receive from"},
    {"xdp-mode", OptionType::kString, "auto",
     "af_xdp: XDP attach mode: auto (native, else generic), native or generic"},
    {"xdp-bind-mode", OptionType::kString, "auto",
     "af_xdp: socket mode: auto (zero-copy, else copy), zero-copy or copy"},
    {"xdp-frames", OptionType::kInt, integer(kDefault.xdp.frames),
     "af_xdp: the fill and rx ring sizes (a power of two): the burst the kernel holds for efu"},
    {"xdp-in-place", OptionType::kBool, "on",
     "af_xdp: on: the pipelines read each payload in the UMEM frames the kernel wrote (a jumbo "
     "datagram's frames are gathered on its processing thread); off: the receive thread copies "
     "each payload into a pool slot"},
    {"verify-checksums", OptionType::kBool, on_off(kDefault.xdp_receiver.verify_checksums),
     "af_xdp: verify IPv4 header and UDP checksums; failures are counted and dropped"},
    {"cpu", OptionType::kString, "",
     "Pin threads to cores: rx=N[,N2...],proc=M[,M2...] (one core per receive thread and per "
     "processing thread)"},
    {"processing-threads", OptionType::kInt, integer(kDefault.threads),
     "Processing threads, each with its own rings and pipeline"},
    {"wait-policy", OptionType::kString, "adaptive",
     "How a processing thread waits for packets: adaptive (spins only while packets come closer "
     "together than a sleep and wake-up cost, else sleeps), spin (spins 100 us after each batch, "
     "then sleeps: for cores given to efu alone) or sleep"},
    {"receive-threads", OptionType::kInt, integer(kDefault.receive_threads),
     "socket: receive threads, each with its own socket on the port (SO_REUSEPORT; the kernel "
     "spreads flows by address)"},
    {"gro", OptionType::kBool, on_off(kDefault.receiver.gro),
     "socket: UDP GRO, several datagrams of one flow per receive slot (pool slots grow to 64 KB)"},
    {"drain-timeout", OptionType::kFloat,
     seconds(std::chrono::nanoseconds(kDefault.receiver.drain_timeout_ns)),
     "Seconds to keep receiving what the socket holds at stop; the rest is counted, not lost"},
    {"batch-size", OptionType::kInt, integer(kDefault.receiver.batch_size),
     "Datagrams per recvmmsg() call, at most"},
    {"batch-bytes", OptionType::kInt, integer(kDefault.receiver.batch_bytes),
     "socket: bytes per recvmmsg() call, about (fewer datagrams per call when they are large, so "
     "the slots written stay in the receiving core's cache); 0: batch-size always"},
    {"receive-coalesce-us", OptionType::kInt, integer(kDefault.receiver.coalesce_ns / 1000),
     "socket: while datagrams come one at a time at a moderate rate (one every 10 us to every "
     "half window), the receive thread pauses up to this long before its next recvmmsg(), so "
     "that one call and one wake-up of the processing thread take several datagrams; 0: never "
     "pause (the default with --wait-policy spin)"},
    {"full-ring", OptionType::kString,
     kDefault.receiver.full_ring == FullRing::kHold ? "hold" : "drop",
     "socket: when a processing ring is full, hold (stop reading the socket until there is "
     "room: the socket buffer holds what arrives, the kernel drops past it, counted as "
     "receive.dropped.kernel) or drop (keep reading, count what the ring cannot take as "
     "receive.dropped.ring_full). hold applies to one processing thread; with several, drop"},
    {"rcvbuf", OptionType::kInt, integer(kDefault.socket.rcvbuf_bytes),
     "SO_RCVBUF to request, in bytes"},
    {"max-datagram", OptionType::kInt, integer(kDefault.receiver.max_datagram),
     "Largest datagram accepted, in bytes; larger ones are counted as truncated"},
    {"ring-size", OptionType::kInt, integer(kDefault.ring_size),
     "Packets each receive->processing ring holds"},
    {"stats-interval", OptionType::kFloat, seconds(kDefault.stats_interval),
     "Seconds between stats samples"},
    {"stats-json", OptionType::kString, text(kDefault.stats_json),
     "Write the final counters to this file as JSON at exit"},
    {"stop-after", OptionType::kFloat, number(kDefault.stop_after_s),
     "Stop gracefully after this many seconds (0: run until signalled)"},
    {"flush-timeout", OptionType::kFloat, number(kDefault.flush_timeout_s),
     "Seconds to wait at stop for Kafka deliveries"},
    {"log-level", OptionType::kString, "info", "trace, debug, info, warn or error"},
    {"broker", OptionType::kString, "127.0.0.1:9092",
     "Kafka bootstrap servers HOST:PORT[,HOST:PORT], or 'none' to run without Kafka"},
    {"instrument", OptionType::kString, "efu", "Instrument name; the default topics start with it"},
    {"events-topic", OptionType::kString, "", "ev44 topic (default <instrument>_detector)"},
    {"status-topic", OptionType::kString, "", "x5f2 status topic (default <instrument>_status)"},
    {"samples-topic", OptionType::kString, "",
     "ar51 raw-sample topic (default <instrument>_samples)"},
    {"source-name", OptionType::kString, "", "ev44/ar51 source_name (default: the module name)"},
    {"kafka-config", OptionType::kString, "",
     "JSON file of librdkafka properties that override the defaults"},
    {"ev44-max-bytes", OptionType::kInt, integer(kDefault.outputs.ev44_max_bytes),
     "Flush an ev44 message at this size"},
    {"ev44-max-latency-ms", OptionType::kInt, integer(kDefault.outputs.ev44_max_latency.count()),
     "Flush an ev44 message at this age"},
    {"raw-sample-every", OptionType::kInt, integer(kDefault.outputs.raw_sample_every),
     "Publish every Nth packet to the samples topic as ar51 (0: off)"},
    // Live histograms of the events formed, for every plugin (docs/architecture.md §6.4).
    {"histograms", OptionType::kString, "",
     "Publish live da00 histograms of the events formed (time of flight and pixel counts) to "
     "this topic, as sources <source-name>_tof and <source-name>_pixels (empty: off)"},
    {"histogram-pulses", OptionType::kInt, integer(kDefault.outputs.histograms.pulses),
     "Pulses per live histogram: one pair of messages every N pulses"},
    {"histogram-tof-bins", OptionType::kInt, integer(kDefault.outputs.histograms.tof_bins),
     "Time-of-flight bins of the live histogram, over [0, histogram-tof-max-ns)"},
    {"histogram-tof-max-ns", OptionType::kInt, integer(kDefault.outputs.histograms.tof_max_ns),
     "Upper end of the live time-of-flight histogram in ns (later events are counted in "
     "histograms.tof.beyond_range)"},
    {"histogram-pixels", OptionType::kInt, integer(kDefault.outputs.histograms.pixels),
     "Pixel ids 1..N of the live pixel-count histogram, one bin each (others are counted in "
     "histograms.pixels.out_of_range)"},
    // Operator interfaces (docs/operations.md).
    {"command-port", OptionType::kInt, "0",
     "TCP port of the command port, the reference EFU's protocol (0: off)"},
    {"command-bind", OptionType::kString, text(kCommandDefault.bind_address),
     "Address the command port listens on; it can stop efu, so keep it local"},
    {"command-idle-timeout", OptionType::kFloat, seconds(kCommandDefault.idle_timeout),
     "Seconds after which a silent command-port client is closed"},
    {"graphite", OptionType::kString, "",
     "Send every counter to Graphite/Carbon plaintext at HOST:PORT each stats interval"},
    {"stats-prefix", OptionType::kString, "",
     "Counter name prefix on Graphite and the command port (default efu.<instrument>)"},
    {"stats-region", OptionType::kString, "0",
     "Name segment after the prefix, as the reference's region (empty: none)"},
    {"metrics", OptionType::kString, "",
     "Serve Prometheus /metrics on ADDR:PORT (IPv6: [ADDR]:PORT; empty: off)"},
};

// Options that only steer the command line itself; never config keys or pipeline options.
constexpr const char* kCommandOnly[] = {"help", "version", "list-modules", "module", "config"};

std::string type_name(OptionType t) {
  switch (t) {
    case OptionType::kInt:
      return "INT";
    case OptionType::kFloat:
      return "NUM";
    case OptionType::kBool:
      return "on|off";
    case OptionType::kString:
      return "TEXT";
  }
  return "TEXT";
}

std::string json_expectation(OptionType t) {
  switch (t) {
    case OptionType::kInt:
      return "an integer";
    case OptionType::kFloat:
      return "a number";
    case OptionType::kBool:
      return "true or false";
    case OptionType::kString:
      return "a string";
  }
  return "a value";
}

std::string json_type_name(const nlohmann::json& v) {
  if (v.is_null()) return "null";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number_integer()) return "an integer";
  if (v.is_number()) return "a number";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "an array";
  return "an object";
}

nlohmann::json read_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError("--config: cannot open '" + path + "'; expected a readable JSON file");
  try {
    nlohmann::json j = nlohmann::json::parse(in);
    if (!j.is_object()) {
      throw ConfigError("--config: '" + path + "' holds " + json_type_name(j) +
                        "; expected a JSON object of option names");
    }
    return j;
  } catch (const nlohmann::json::parse_error& e) {
    // e.what() is multi-word but one line; keep only the position part after the prefix.
    throw ConfigError("--config: '" + path + "' is not valid JSON (byte " + std::to_string(e.byte) +
                      "); expected a JSON object of option names");
  } catch (const nlohmann::json::exception& e) {
    // Valid syntax the parser still refuses, e.g. a number beyond every C++ type.
    throw ConfigError("--config: '" + path + "' is not usable JSON (" + e.what() +
                      "); expected a JSON object of option names");
  }
}

// The JSON value as option text, or throws naming the key.
std::string json_to_text(const std::string& path, const std::string& key, const nlohmann::json& v,
                         OptionType type) {
  auto bad = [&] {
    return ConfigError("--config: '" + path + "': key '" + key + "' is " + json_type_name(v) +
                       "; expected " + json_expectation(type));
  };
  switch (type) {
    case OptionType::kInt:
      if (!v.is_number_integer()) throw bad();
      return v.dump();
    case OptionType::kFloat:
      if (!v.is_number()) throw bad();
      return v.dump();
    case OptionType::kBool:
      if (!v.is_boolean()) throw bad();
      return v.get<bool>() ? "on" : "off";
    case OptionType::kString:
      if (!v.is_string()) throw bad();
      return v.get<std::string>();
  }
  throw bad();
}

bool is_command_only(std::string_view name) {
  for (const char* c : kCommandOnly) {
    if (name == c) return true;
  }
  return false;
}

std::vector<OptionSpec> all_options(const PluginDescriptor* plugin) {
  std::vector<OptionSpec> all(std::begin(kHostOptions), std::end(kHostOptions));
  if (plugin != nullptr) {
    for (std::size_t i = 0; i < plugin->option_count; ++i) {
      const OptionSpec& p = plugin->options[i];
      for (const OptionSpec& h : all) {
        if (std::string_view(h.name) == p.name || is_command_only(p.name)) {
          throw ConfigError(std::string("--module: plugin '") + plugin->name +
                            "' declares option '" + p.name +
                            "', which the host already has; expected a plugin-specific name");
        }
      }
      all.push_back(p);
    }
  }
  return all;
}

// The name of a long option in an argument ("--port=9" or "--port" -> "port"), or "".
std::string long_name(std::string_view arg) {
  if (arg.size() < 3 || arg.substr(0, 2) != "--") return "";
  arg.remove_prefix(2);
  return std::string(arg.substr(0, arg.find('=')));
}

}  // namespace

std::span<const OptionSpec> host_options() { return kHostOptions; }

CommandLine scan_command_line(int argc, const char* const* argv) {
  CommandLine cl;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const std::string name = long_name(arg);
    auto value = [&]() -> std::string {
      const auto eq = arg.find('=');
      if (eq != std::string_view::npos) return std::string(arg.substr(eq + 1));
      if (i + 1 < argc) return argv[++i];
      throw ConfigError("--" + name + ": missing value; expected --" + name + " VALUE");
    };
    if (arg == "-h" || name == "help")
      cl.help = true;
    else if (name == "version")
      cl.version = true;
    else if (name == "list-modules")
      cl.list_modules = true;
    else if (name == "module")
      cl.module = value();
    else if (name == "config")
      cl.config_file = value();
  }
  if (cl.module.empty() && !cl.config_file.empty()) {
    const nlohmann::json j = read_config(cl.config_file);
    if (auto it = j.find("module"); it != j.end()) {
      if (!it->is_string()) {
        throw ConfigError("--config: '" + cl.config_file + "': key 'module' is " +
                          json_type_name(*it) + "; expected a string");
      }
      cl.module = it->get<std::string>();
    }
  }
  return cl;
}

OptionValues parse_options(int argc, const char* const* argv, const PluginDescriptor* plugin,
                           const std::string& config_file) {
  const std::vector<OptionSpec> specs = all_options(plugin);
  CLI::App app("efu");
  app.set_help_flag();  // --help is handled before parsing
  std::map<std::string, std::string> text;
  std::map<std::string, CLI::Option*> cli;
  std::string ignored;
  for (const char* c : kCommandOnly) {
    const std::string n = c;
    if (n == "module" || n == "config") {
      app.add_option("--" + n, ignored);
    } else {
      app.add_flag("--" + n);
    }
  }
  for (const OptionSpec& s : specs) {
    text[s.name] = s.default_value;
    // The last occurrence wins, so a script can append an override to a fixed command line.
    cli[s.name] = app.add_option(std::string("--") + s.name, text[s.name], s.help)
                      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ExtrasError& e) {
    throw ConfigError(std::string("unknown argument: ") + e.what() +
                      "; expected options listed by efu --module NAME --help");
  } catch (const CLI::ParseError& e) {
    throw ConfigError(std::string(e.what()) + "; see efu --help");
  }

  OptionValues values;
  for (const OptionSpec& s : specs) {
    values.set(s.name, text[s.name], cli[s.name]->count() > 0);
  }

  if (!config_file.empty()) {
    const nlohmann::json j = read_config(config_file);
    for (const auto& [key, v] : j.items()) {
      if (key == "module") continue;  // taken by scan_command_line
      const OptionSpec* spec = nullptr;
      for (const OptionSpec& s : specs) {
        if (key == s.name) spec = &s;
      }
      if (spec == nullptr) {
        throw ConfigError("--config: '" + config_file + "': unknown key '" + key +
                          "'; expected an option name without dashes (see efu --help)");
      }
      if (cli[key]->count() > 0) continue;  // the command line wins
      values.set(key, json_to_text(config_file, key, v, spec->type), true);
    }
  }

  for (const OptionSpec& s : specs) {
    const std::string& v = values.get_string(s.name);
    const std::string expected = check_option_value(s.type, v);
    if (!expected.empty()) {
      throw ConfigError(std::string("--") + s.name + ": '" + v + "' is not valid; expected " +
                        expected);
    }
  }
  return values;
}

std::string help_text(const PluginDescriptor* plugin) {
  std::ostringstream out;
  auto section = [&](std::span<const OptionSpec> specs) {
    for (const OptionSpec& s : specs) {
      std::string left = std::string("  --") + s.name + " " + type_name(s.type);
      if (left.size() < 34)
        left.resize(34, ' ');
      else
        left += "\n" + std::string(34, ' ');
      out << left << s.help;
      if (*s.default_value != '\0') out << " [default: " << s.default_value << "]";
      out << "\n";
    }
  };
  out << "efu: event formation for neutron and particle detectors.\n"
      << "Receives detector readouts over UDP, runs a detector pipeline plugin, publishes events\n"
      << "(ev44), raw samples (ar51) and status (x5f2) to Kafka.\n\n"
      << "Usage: efu --module NAME|PATH [options]\n"
      << "       efu --list-modules\n"
      << "       efu --module NAME --help      (adds the plugin's own options)\n\n"
      << "Command:\n"
      << "  --module NAME|PATH                Detector pipeline plugin to run\n"
      << "  --config FILE                     JSON object of option names without dashes;\n"
      << "                                    the command line wins over it\n"
      << "  --list-modules                    List the plugins on the search path\n"
      << "  --version                         Print the version\n"
      << "  --help                            This text\n\n"
      << "Host options:\n";
  section(host_options());
  if (plugin != nullptr) {
    out << "\nOptions of plugin '" << plugin->name << "' " << plugin->version << ":\n";
    section(std::span(plugin->options, plugin->option_count));
  } else {
    out << "\nPlugin options: see efu --module NAME --help.\n";
  }
  return out.str();
}

}  // namespace efu
