// Option checks and names of the operator interfaces.
#include <gtest/gtest.h>

#include "efu/errors.h"
#include "ops/metrics_endpoint.h"
#include "ops/operator_interfaces.h"
#include "receive/socket_address.h"

namespace efu {
namespace {

OptionValues values(std::map<std::string, std::string> set) {
  OptionValues v;
  const std::map<std::string, std::string> defaults = {{"stats-prefix", ""},
                                                       {"stats-region", "0"},
                                                       {"command-bind", "127.0.0.1"},
                                                       {"graphite", ""},
                                                       {"metrics", ""}};
  for (const auto& [k, d] : defaults) {
    const auto it = set.find(k);
    v.set(k, it == set.end() ? d : it->second, it != set.end());
  }
  return v;
}

std::string error_of(std::map<std::string, std::string> set,
                     const std::string& instrument = "freia") {
  try {
    read_operator_settings(values(std::move(set)), "multiblade", instrument);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(OperatorSettings, PrefixFollowsTheReferenceConvention) {
  EXPECT_EQ(read_operator_settings(values({}), "multiblade", "freia").stat_prefix, "efu.freia.0.");
  EXPECT_EQ(read_operator_settings(values({{"stats-region", ""}}), "m", "freia").stat_prefix,
            "efu.freia.");
  EXPECT_EQ(read_operator_settings(values({{"stats-prefix", "ess.lab."}, {"stats-region", "r1"}}),
                                   "m", "freia")
                .stat_prefix,
            "ess.lab.r1.");
}

TEST(OperatorSettings, EndpointsAreParsed) {
  const OperatorSettings s = read_operator_settings(
      values({{"graphite", "carbon.example.org:2003"}, {"metrics", "[::1]:0"}}), "m", "freia");
  ASSERT_TRUE(s.graphite.has_value());
  EXPECT_EQ(s.graphite->host, "carbon.example.org");
  EXPECT_EQ(s.graphite->port, 2003);
  EXPECT_EQ(s.graphite->prefix, "efu.freia.0.");
  ASSERT_TRUE(s.metrics.has_value());
  EXPECT_EQ(s.metrics->listen, "[::1]:0");
  EXPECT_EQ(s.metrics->module, "m");
}

TEST(OperatorSettings, BadValuesNameTheOption) {
  EXPECT_EQ(error_of({{"graphite", "carbon"}}),
            "--graphite: 'carbon' has no host and port; expected HOST:PORT or [IPV6]:PORT with "
            "PORT 1..65535");
  EXPECT_NE(error_of({{"graphite", "h:0"}}).find("--graphite: 'h:0' has a bad port"),
            std::string::npos);
  EXPECT_NE(error_of({{"graphite", "h:70000"}}).find("has a bad port"), std::string::npos);
  EXPECT_NE(error_of({{"metrics", "::1:9100"}})
                .find("--metrics: '::1:9100' has an IPv6 address "
                      "without brackets"),
            std::string::npos);
  EXPECT_NE(error_of({{"metrics", "[::1:9100"}}).find("unclosed"), std::string::npos);
  EXPECT_NE(
      error_of({{"stats-prefix", "a..b"}}).find("--stats-prefix: 'a..b' is not a metric path"),
      std::string::npos);
  EXPECT_NE(error_of({{"stats-prefix", "a b"}}).find("--stats-prefix"), std::string::npos);
  EXPECT_NE(error_of({{"stats-region", "x.y"}}).find("--stats-region: 'x.y' is not a name"),
            std::string::npos);
  EXPECT_NE(error_of({}, "bad name").find("--instrument"), std::string::npos);
}

TEST(OperatorSettings, CommandBindMustBeNumeric) {
  try {
    numeric_address("localhost", 8888, SOCK_STREAM, "--command-bind");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--command-bind: 'localhost' is not an address"),
              std::string::npos);
  }
  EXPECT_EQ(numeric_address("::1", 8888, SOCK_STREAM, "x").text(), "[::1]:8888");
  EXPECT_EQ(numeric_address("127.0.0.1", 0, SOCK_STREAM, "x").text(), "127.0.0.1:0");
}

TEST(PrometheusNames, CountersGaugesAndUnits) {
  EXPECT_EQ(prometheus_series("receive.packets", CounterKind::kCounter).name,
            "efu_receive_packets_total");
  EXPECT_EQ(prometheus_series("receive.ring.fill", CounterKind::kGauge).name,
            "efu_receive_ring_fill");
  EXPECT_EQ(prometheus_series("odd-name.x/y", CounterKind::kCounter).name,
            "efu_odd_name_x_y_total");
  const PrometheusSeries idle = prometheus_series("process.idle_ns", CounterKind::kCounter);
  EXPECT_EQ(idle.name, "efu_process_idle_seconds_total");
  EXPECT_DOUBLE_EQ(idle.scale, 1e-9);
  EXPECT_EQ(prometheus_series("kafka.latency_ms", CounterKind::kGauge).name,
            "efu_kafka_latency_seconds");
}

}  // namespace
}  // namespace efu
