#include "startup/runner.h"

#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "efu/errors.h"
#include "efu/outputs.h"
#include "ops/operator_interfaces.h"
#include "startup/data_path_assembly.h"
#include "startup/host_options.h"
#include "startup/lifecycle.h"
#include "startup/plugin_loader.h"
#include "startup/report.h"
#include "startup/settings.h"

#ifndef EFU_VERSION
#define EFU_VERSION "0.0.0"
#endif

namespace efu {
namespace {

void setup_logging() {
  auto logger = spdlog::stderr_color_mt("efu");
  logger->set_pattern("%Y-%m-%d %H:%M:%S.%e %^%l%$ %v");
  spdlog::set_default_logger(logger);
}

int list_modules() {
  const PluginListing listing = list_plugins();
  std::printf("plugin search path:\n");
  for (const std::string& d : plugin_search_path()) std::printf("  %s\n", d.c_str());
  std::printf("plugins:\n");
  if (listing.plugins.empty()) std::printf("  (none)\n");
  for (const LoadedPlugin& p : listing.plugins) {
    std::printf("  %-14s %-10s %s\n  %-14s %s\n", p.descriptor->name, p.descriptor->version,
                p.descriptor->summary ? p.descriptor->summary : "", "", p.path.c_str());
  }
  for (const std::string& f : listing.failures) std::printf("  not loadable: %s\n", f.c_str());
  return 0;
}

/// --version, --list-modules, and --help without a plugin are answered before any plugin is
/// loaded; the exit code, or nothing when there is a plugin to load.
std::optional<int> answer_without_plugin(const CommandLine& cl) {
  if (cl.version) {
    std::printf("efu %s (plugin ABI %u)\n", EFU_VERSION, kPluginAbiVersion);
    return 0;
  }
  if (cl.list_modules) return list_modules();
  if (!cl.module.empty()) return std::nullopt;
  if (cl.help) {
    std::fputs(help_text(nullptr).c_str(), stdout);
    return 0;
  }
  throw ConfigError("--module: missing; expected a plugin name or path (see efu --list-modules)");
}

/// One run, in the order of docs/architecture.md §8: settings, the data path, its lifecycle up
/// to the ordered stop (docs/architecture.md §8.2), the report.
int run(int argc, const char* const* argv) {
  const CommandLine cl = scan_command_line(argc, argv);
  if (const std::optional<int> exit_code = answer_without_plugin(cl)) return *exit_code;
  const LoadedPlugin plugin = load_plugin(cl.module);
  const PluginDescriptor& desc = *plugin.descriptor;
  if (cl.help) {
    std::fputs(help_text(&desc).c_str(), stdout);
    return 0;
  }
  const OptionValues values = parse_options(argc, argv, &desc, cl.config_file);
  const HostSettings settings = read_settings(values, desc);
  spdlog::info("efu {}: plugin {} {} from {}", EFU_VERSION, desc.name, desc.version, plugin.path);

  // The signal thread before any other thread (Kafka's, the interfaces', the data path's):
  // every thread started after it inherits the blocked signal mask, so only it takes SIGTERM.
  StopRequest stop_request;
  SignalWatcher signal_watcher(stop_request);

  // The data path (docs/architecture.md §8.1). The plugin's init() once, then a pipeline per
  // processing thread on what it loaded (docs/architecture.md §2.2); on the way out the pipelines
  // go first, then release().
  CounterRegistry counters;
  const std::unique_ptr<Outputs> outputs = open_outputs(settings.outputs, counters);
  warn_if_unrouted(desc, settings.threads);
  const PluginInstance pipelines(
      desc, values, counters, settings.threads,
      [&](unsigned i) -> EventSink& { return outputs->events(i).sink(); },
      [&](unsigned i) { return outputs->events(i).sources(); });
  DataPath data_path(settings, desc, pipelines, *outputs, counters);
  RunStats stats(settings, counters, *outputs, data_path);
  OperatorInterfaces ops(settings.ops, counters, stats.publisher());
  counters.freeze();

  // The lifecycle: run until a stop is requested, then the ordered stop of
  // docs/architecture.md §8.2.
  run_data_threads(settings, data_path, stats.publisher(), ops, stop_request);
  stop_stats_and_flush(stats.publisher(), *outputs, settings.flush_timeout_s);
  ops.stop();

  // The report.
  print_final(counters, stats.final_loss());
  if (!settings.stats_json.empty()) write_stats_json(settings.stats_json, counters);
  spdlog::info("stopped");
  return 0;
}

}  // namespace

int run_efu(int argc, const char* const* argv) {
  static std::once_flag logging_once;
  std::call_once(logging_once, setup_logging);
  // Every failure ends in one line: a configuration or start-up problem with exit code 2,
  // anything else with 1 (docs/architecture.md §7.3). The threads were stopped and joined on
  // the way out (DataThreads, SignalWatcher).
  try {
    return run(argc, argv);
  } catch (const ConfigError& e) {
    std::fprintf(stderr, "efu: error: %s\n", e.what());
    return kExitConfigError;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr,
                 "efu: error: out of memory; expected smaller --ring-size, "
                 "--processing-threads or --max-datagram\n");
    return kExitConfigError;
  } catch (...) {
    std::fprintf(stderr, "efu: fatal: %s\n", current_exception_text().c_str());
    return 1;
  }
}

}  // namespace efu
