#include "efu/kafka/producer.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string_view>
#include <thread>

#include <librdkafka/rdkafka.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "efu/errors.h"

namespace efu::kafka {
namespace {

/// Lets a few lines through per window, then counts what it holds back and says so when the
/// next window opens: a broker outage must not flood the log. Single-threaded (poll side).
class LogLimiter {
 public:
  bool allow() {
    const auto now = std::chrono::steady_clock::now();
    if (now - window_start_ >= kWindow) {
      if (suppressed_ > 0) {
        spdlog::warn("kafka: {} more messages suppressed in the last {} s", suppressed_,
                     std::chrono::duration_cast<std::chrono::seconds>(kWindow).count());
      }
      window_start_ = now;
      in_window_ = 0;
      suppressed_ = 0;
    }
    if (in_window_ < kPerWindow) {
      ++in_window_;
      return true;
    }
    ++suppressed_;
    return false;
  }

 private:
  static constexpr std::chrono::seconds kWindow{10};
  static constexpr unsigned kPerWindow = 5;
  std::chrono::steady_clock::time_point window_start_{};
  unsigned in_window_ = 0;
  std::uint64_t suppressed_ = 0;
};

/// What librdkafka's statistics (statistics.interval.ms, a JSON document each interval) say
/// about the cluster: its totals become counters, the partition leaders become a count of
/// leader changes. librdkafka's totals only grow, so each document adds what grew since the
/// last one. Served on the callback thread (one at a time, as the delivery reports).
class ClusterView {
 public:
  explicit ClusterView(CounterRegistry& counters)
      : leader_changes_(counters.counter("kafka.leader.changes")),
        disconnects_(counters.counter("kafka.broker.disconnects")),
        retries_(counters.counter("kafka.broker.retries")),
        request_timeouts_(counters.counter("kafka.broker.request_timeouts")),
        parse_errors_(counters.counter("kafka.stats.errors")),
        brokers_up_(counters.gauge("kafka.brokers.up")) {}

  void update(std::string_view json) noexcept {
    try {
      const auto doc = nlohmann::json::parse(json);
      update_brokers(doc.value("brokers", nlohmann::json::object()));
      update_leaders(doc.value("topics", nlohmann::json::object()));
    } catch (const std::exception&) {
      parse_errors_.add();  // counted, never fatal: only these counters miss an interval
    }
  }

 private:
  struct Totals {
    std::uint64_t disconnects = 0, retries = 0, request_timeouts = 0;
  };

  void update_brokers(const nlohmann::json& brokers) {
    Totals now;
    std::uint64_t up = 0;
    for (const auto& [name, b] : brokers.items()) {
      // Only real brokers: the bootstrap entries (nodeid -1) and internal ones would count a
      // connection twice.
      if (b.value("nodeid", -1) < 0) continue;
      now.disconnects += b.value("disconnects", std::uint64_t{0});
      now.retries += b.value("txretries", std::uint64_t{0});
      now.request_timeouts += b.value("req_timeouts", std::uint64_t{0});
      up += b.value("state", std::string()) == "UP" ? 1 : 0;
    }
    add_growth(disconnects_, now.disconnects, last_.disconnects);
    add_growth(retries_, now.retries, last_.retries);
    add_growth(request_timeouts_, now.request_timeouts, last_.request_timeouts);
    brokers_up_.set(up);
  }

  // A leader is known (>= 0) or not (-1, between the old leader's loss and the new one's
  // election). A change is a known leader that differs from the last known one, so old -> -1
  // -> new counts once, and a leader that drops out and comes back counts none.
  void update_leaders(const nlohmann::json& topics) {
    for (const auto& [topic, t] : topics.items()) {
      // A named value: a range-for over value(...).items() would iterate a destroyed temporary.
      const nlohmann::json partitions = t.value("partitions", nlohmann::json::object());
      for (const auto& [id, p] : partitions.items()) {
        const int leader = p.value("leader", -1);
        if (p.value("partition", -1) < 0 || leader < 0) continue;  // -1: librdkafka's UA queue
        auto [it, inserted] = leaders_.try_emplace(topic + '/' + id, leader);
        if (!inserted && it->second != leader) {
          leader_changes_.add();
          it->second = leader;
        }
      }
    }
  }

  // A broker handle librdkafka drops takes its totals with it: then nothing is added, and the
  // new, smaller sum is the base for the next interval.
  static void add_growth(Counter& counter, std::uint64_t now, std::uint64_t& last) {
    if (now > last) counter.add(now - last);
    last = now;
  }

  Counter& leader_changes_;
  Counter& disconnects_;
  Counter& retries_;
  Counter& request_timeouts_;
  Counter& parse_errors_;
  Counter& brokers_up_;
  Totals last_;
  std::map<std::string, int> leaders_;  // "topic/partition" -> last known leader
};

}  // namespace

struct Producer::Client {
  rd_kafka_t* rk = nullptr;
  std::vector<rd_kafka_topic_t*> topics;  // by TopicId

  Client() = default;
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;
  ~Client() {
    for (rd_kafka_topic_t* t : topics) rd_kafka_topic_destroy(t);
    if (rk != nullptr) {
      // flush() has purged and counted what was left; this only ends an instance that was
      // never flushed (a start-up failure) without waiting for its broker.
      rd_kafka_purge(rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
      rd_kafka_destroy(rk);
    }
  }

  /// Throws ConfigError when librdkafka rejects the name.
  void add_topic(const std::string& name) {
    rd_kafka_topic_t* t = rd_kafka_topic_new(rk, name.c_str(), nullptr);
    if (t == nullptr) {
      throw ConfigError("topic '" + name + "' is not valid (" +
                        rd_kafka_err2str(rd_kafka_last_error()) + "); expected a Kafka topic name");
    }
    topics.push_back(t);
  }

  std::uint64_t depth() const noexcept {
    const int n = rd_kafka_outq_len(rk);
    return n > 0 ? static_cast<std::uint64_t>(n) : 0;
  }
};

struct Producer::Callbacks {
  explicit Callbacks(CounterRegistry& counters)
      : delivery_ok(counters.counter("kafka.delivery.ok")),
        delivery_failed(counters.counter("kafka.delivery.failed")),
        failed_timed_out(counters.counter("kafka.delivery.failed.timed_out")),
        failed_too_large(counters.counter("kafka.delivery.failed.too_large")),
        failed_topic(counters.counter("kafka.delivery.failed.topic")),
        failed_purged(counters.counter("kafka.delivery.failed.purged")),
        failed_other(counters.counter("kafka.delivery.failed.other")),
        failed_fatal(counters.counter("kafka.delivery.failed.fatal")),
        resent(counters.counter("kafka.delivery.resent")),
        resent_uncertain(counters.counter("kafka.delivery.resent.uncertain")),
        replaced(counters.counter("kafka.producer.replaced")),
        uncertain(counters.counter("kafka.delivery.uncertain")),
        events_delivered(counters.counter("ev44.events.delivered")),
        events_failed(counters.counter("ev44.events.delivery.failed")),
        events_uncertain(counters.counter("ev44.events.delivery.uncertain")),
        errors(counters.counter("kafka.errors")),
        errors_transport(counters.counter("kafka.errors.transport")),
        errors_all_brokers_down(counters.counter("kafka.errors.all_brokers_down")),
        errors_other(counters.counter("kafka.errors.other")),
        queue_depth(counters.gauge("kafka.queue.depth")),
        queue_bytes(counters.gauge("kafka.queue.bytes")),
        queue_fill_pct(counters.gauge("kafka.queue.fill_pct")),
        cluster(counters) {}

  /// The class of a client error (librdkafka's error callback): a connection to one broker lost
  /// or refused (a broker died or restarts), every broker down, or anything else.
  Counter& error_class(int err) {
    switch (err) {
      case RD_KAFKA_RESP_ERR__TRANSPORT:
        return errors_transport;
      case RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN:
        return errors_all_brokers_down;
      default:
        return errors_other;
    }
  }

  /// Delivery reports served so far, ok or failed (read by producing threads while they wait).
  std::uint64_t reports() const noexcept { return delivery_ok.get() + delivery_failed.get(); }

  Counter& failure_reason(rd_kafka_resp_err_t err) {
    switch (err) {
      case RD_KAFKA_RESP_ERR__MSG_TIMED_OUT:
      case RD_KAFKA_RESP_ERR__TIMED_OUT:
      case RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT:
        return failed_timed_out;
      case RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE:
      case RD_KAFKA_RESP_ERR_RECORD_LIST_TOO_LARGE:
        return failed_too_large;
      case RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC:
      case RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
      case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
      case RD_KAFKA_RESP_ERR_TOPIC_EXCEPTION:
        return failed_topic;
      case RD_KAFKA_RESP_ERR__PURGE_QUEUE:
      case RD_KAFKA_RESP_ERR__PURGE_INFLIGHT:
        return failed_purged;
      default:
        return failed_other;
    }
  }

  Counter& delivery_ok;
  Counter& delivery_failed;
  Counter& failed_timed_out;
  Counter& failed_too_large;
  Counter& failed_topic;
  Counter& failed_purged;
  Counter& failed_other;
  Counter& failed_fatal;
  Counter& resent;
  Counter& resent_uncertain;
  Counter& replaced;
  Counter& uncertain;
  Counter& events_delivered;
  Counter& events_failed;
  Counter& events_uncertain;
  Counter& errors;
  Counter& errors_transport;
  Counter& errors_all_brokers_down;
  Counter& errors_other;
  Counter& queue_depth;
  Counter& queue_bytes;
  Counter& queue_fill_pct;
  /// Payload bytes handed to librdkafka whose report has not been served: added by the
  /// producing threads before they queue a message, subtracted by whichever thread serves its
  /// report. rd_kafka_produce() queues the message under librdkafka's queue lock, and the report
  /// can only be served after a broker thread took it from there under that lock, so the
  /// addition happens before the subtraction and the value never wraps below 0. Beyond that,
  /// relaxed is enough: it is a level for the stats, nothing else is published through it.
  std::atomic<std::uint64_t> queued_bytes{0};
  /// The producer whose instances these callbacks serve (set right after construction).
  Producer* owner = nullptr;
  /// Forwarders for the free callback functions below (a nested type may call the owner's
  /// private members).
  bool resend(rd_kafka_t* from, const rd_kafka_message_t& m) { return owner->resend(from, m); }
  void replace(rd_kafka_t* failed) { owner->replacement_for(failed); }
  bool is_current(const rd_kafka_t* rk) const { return owner->current().rk == rk; }
  LogLimiter delivery_log;
  LogLimiter error_log;
  LogLimiter client_log;
  ClusterView cluster;
};

namespace {

/// A message's opaque is the number of events it holds (see produce()).
void* events_opaque(std::size_t events) {
  return reinterpret_cast<void*>(static_cast<std::uintptr_t>(events));
}
std::uint64_t events_of(const rd_kafka_message_t* message) {
  return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(message->_private));
}

bool is_fatal(rd_kafka_t* rk) {
  return rd_kafka_fatal_error(rk, nullptr, 0) != RD_KAFKA_RESP_ERR_NO_ERROR;
}

void on_delivery(rd_kafka_t* rk, const rd_kafka_message_t* message, void* opaque) {
  auto& cb = *static_cast<Producer::Callbacks*>(opaque);
  cb.queued_bytes.fetch_sub(message->len, std::memory_order_relaxed);
  const std::uint64_t events = events_of(message);
  if (message->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    cb.delivery_ok.add();
    cb.events_delivered.add(events);
    return;
  }
  // Its instance hit a fatal error (librdkafka then fails every message it holds, whatever the
  // code of each): queued again on the replacement, it is neither delivered nor failed yet.
  const bool fatal = is_fatal(rk);
  if (fatal && cb.resend(rk, *message)) return;
  cb.delivery_failed.add();
  (fatal ? cb.failed_fatal : cb.failure_reason(message->err)).add();
  cb.events_failed.add(events);
  // Sent at least once with no answer (the broker died, or the request was purged at stop):
  // the broker may have written it although it counts as failed here.
  if (rd_kafka_message_status(message) == RD_KAFKA_MSG_STATUS_POSSIBLY_PERSISTED) {
    cb.uncertain.add();
    cb.events_uncertain.add(events);
  }
  if (cb.delivery_log.allow()) {
    spdlog::warn("kafka: delivery to '{}' failed: {}", rd_kafka_topic_name(message->rkt),
                 rd_kafka_err2str(message->err));
  }
}

void on_error(rd_kafka_t* rk, int err, const char* reason, void* opaque) {
  auto& cb = *static_cast<Producer::Callbacks*>(opaque);
  cb.errors.add();
  cb.error_class(err).add();
  if (err == RD_KAFKA_RESP_ERR__FATAL) {
    // The replacement is made now (and its line logged, with the reason), so that the
    // producing threads go on even before the failed messages' reports arrive.
    cb.replace(rk);
    return;
  }
  if (cb.error_log.allow()) {
    spdlog::warn("kafka: {}: {}", rd_kafka_err2name(static_cast<rd_kafka_resp_err_t>(err)), reason);
  }
}

void on_log(const rd_kafka_t* rk, int level, const char* facility, const char* text) {
  auto& cb = *static_cast<Producer::Callbacks*>(rd_kafka_opaque(rk));
  // Connection failures also arrive through on_error, which counts them; log them once.
  // A fatal error is logged where the instance is replaced, with its reason.
  if (std::string_view(facility) == "FAIL" || std::string_view(facility) == "FATAL") return;
  if (!cb.client_log.allow()) return;
  // syslog levels: 0..3 error, 4 warning, 5..6 info, 7 debug.
  const auto spd_level = level <= 3   ? spdlog::level::err
                         : level == 4 ? spdlog::level::warn
                         : level <= 6 ? spdlog::level::info
                                      : spdlog::level::debug;
  spdlog::log(spd_level, "librdkafka {}: {}", facility, text);
}

int on_stats(rd_kafka_t* rk, char* json, std::size_t len, void* opaque) {
  auto& cb = *static_cast<Producer::Callbacks*>(opaque);
  // A replaced instance's totals would add to the current one's.
  if (cb.is_current(rk)) cb.cluster.update(std::string_view(json, len));
  return 0;  // librdkafka frees the document
}

/// librdkafka's effective value of an integer property: the one set, or its default.
std::uint64_t conf_value(const rd_kafka_conf_t* conf, const char* name) {
  char text[64];
  std::size_t size = sizeof text;
  if (rd_kafka_conf_get(conf, name, text, &size) != RD_KAFKA_CONF_OK) return 0;
  return std::strtoull(text, nullptr, 10);
}

QueueLimits read_queue_limits(const rd_kafka_conf_t* conf) {
  return QueueLimits{conf_value(conf, "queue.buffering.max.kbytes") * 1024,
                     conf_value(conf, "queue.buffering.max.messages")};
}

// How long flush() serves the reports of what it purged: they are already queued, so this only
// bounds a librdkafka that does not deliver them.
constexpr int kPurgeReportsMs = 1000;

}  // namespace

ProduceCounters::ProduceCounters(CounterRegistry& counters)
    : messages(counters.counter("kafka.produce.messages")),
      bytes(counters.counter("kafka.produce.bytes")),
      failed_queue_full(counters.counter("kafka.produce.failed.queue_full")),
      failed_other(counters.counter("kafka.produce.failed.other")) {}

Producer::Producer(const ProducerConfig& config, CounterRegistry& counters)
    : config_(config),
      queue_full_wait_(config.queue_full_wait),
      callbacks_(std::make_unique<Callbacks>(counters)),
      watch_(limits_) {
  callbacks_->owner = this;
  clients_[0] = make_client(&limits_);
  watch_ = QueueWatch(limits_);
  client_count_.store(1, std::memory_order_release);
  current_.store(clients_[0].get(), std::memory_order_release);
  spdlog::info("kafka: librdkafka {} producer: {}", rd_kafka_version_str(), config.describe());
  poller_ = std::thread([this] { serve_callbacks(); });
}

std::unique_ptr<Producer::Client> Producer::make_client(QueueLimits* limits) const {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char error[512];
  auto set = [&](const std::string& name, const std::string& value) {
    if (rd_kafka_conf_set(conf, name.c_str(), value.c_str(), error, sizeof error) !=
        RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      throw ConfigError("--kafka-config: property '" + name + "' = '" + value +
                        "' is rejected by librdkafka (" + error +
                        "); expected a valid producer property");
    }
  };
  for (const auto& [name, value] : config_.properties) set(name, value);
  // Logs go to the main queue, so on_log runs inside poll() like the other callbacks.
  set("log.queue", "true");
  if (limits != nullptr) *limits = read_queue_limits(conf);
  rd_kafka_conf_set_opaque(conf, callbacks_.get());
  rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
  rd_kafka_conf_set_error_cb(conf, on_error);
  rd_kafka_conf_set_log_cb(conf, on_log);
  rd_kafka_conf_set_stats_cb(conf, on_stats);
  auto client = std::make_unique<Client>();
  client->rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error);
  if (client->rk == nullptr) {
    rd_kafka_conf_destroy(conf);
    throw ConfigError(std::string("--kafka-config: the producer cannot be created (") + error +
                      "); expected a consistent set of librdkafka properties");
  }
  rd_kafka_set_log_queue(client->rk, nullptr);
  for (const std::string& name : topic_names_) client->add_topic(name);
  return client;
}

Producer::Client* Producer::replacement_for(rd_kafka_t* failed) noexcept {
  Client* now = current_.load(std::memory_order_relaxed);  // this thread is its only writer
  if (now->rk != failed) return now;                       // replaced already
  if (failed == abandoned_) return nullptr;
  const std::size_t n = client_count_.load(std::memory_order_relaxed);
  char reason[512] = "";
  rd_kafka_fatal_error(failed, reason, sizeof reason);
  if (n == kMaxClients) {
    spdlog::error(
        "kafka: instance {} of the producer hit a fatal error ({}) and no more may "
        "be made in this run; its undelivered messages are lost "
        "(kafka.delivery.failed.fatal)",
        n, reason);
    abandoned_ = failed;
    return nullptr;
  }
  std::unique_ptr<Client> next;
  try {
    next = make_client();
  } catch (const std::exception& e) {
    spdlog::error("kafka: the producer hit a fatal error ({}) and cannot be replaced: {}", reason,
                  e.what());
    abandoned_ = failed;
    return nullptr;
  }
  Client* raw = next.get();
  clients_[n] = std::move(next);
  client_count_.store(n + 1, std::memory_order_release);
  current_.store(raw, std::memory_order_release);
  callbacks_->replaced.add();
  spdlog::error(
      "kafka: the producer hit a fatal error ({}); replaced it by instance {} of at "
      "most {}, which queues again what the old one had not delivered "
      "(kafka.delivery.resent)",
      reason, n + 1, kMaxClients);
  return raw;
}

bool Producer::resend(rd_kafka_t* from, const rd_kafka_message_t& m) noexcept {
  Client* to = replacement_for(from);
  if (to == nullptr) return false;
  const std::string_view name = rd_kafka_topic_name(m.rkt);
  std::size_t id = 0;
  while (id < topic_names_.size() && topic_names_[id] != name) ++id;
  if (id == topic_names_.size()) return false;  // not a topic of ours: cannot happen
  // Without RD_KAFKA_MSG_F_BLOCK: this thread serves the reports that make room.
  if (rd_kafka_produce(to->topics[id], RD_KAFKA_PARTITION_UA, RD_KAFKA_MSG_F_COPY, m.payload, m.len,
                       m.key, m.key_len, m._private) != 0) {
    return false;
  }
  callbacks_->queued_bytes.fetch_add(m.len, std::memory_order_relaxed);
  callbacks_->resent.add();
  if (rd_kafka_message_status(&m) == RD_KAFKA_MSG_STATUS_POSSIBLY_PERSISTED) {
    callbacks_->resent_uncertain.add();
  }
  return true;
}

void Producer::serve_callbacks() noexcept {
  pthread_setname_np(pthread_self(), "efu-kafka");
  // rd_kafka_poll() returns as soon as a report or error is there, or after the timeout; the
  // timeout only bounds how long stop_polling() waits when nothing happens (it also yields).
  // Replaced instances are served too while they hold messages: their reports resend them.
  while (!stop_polling_.load(std::memory_order_acquire)) {
    const std::size_t n = client_count_.load(std::memory_order_acquire);
    bool old_busy = false;
    for (std::size_t i = 0; i + 1 < n; ++i) {
      if (clients_[i]->depth() == 0) continue;
      rd_kafka_poll(clients_[i]->rk, 0);
      old_busy = true;
    }
    rd_kafka_poll(clients_[n - 1]->rk, old_busy ? 10 : 100);
  }
}

void Producer::stop_polling() noexcept {
  if (!poller_.joinable()) return;
  stop_polling_.store(true, std::memory_order_release);
  rd_kafka_yield(current().rk);
  poller_.join();
}

Producer::~Producer() {
  stop_polling();
  const std::size_t n = client_count_.load(std::memory_order_acquire);
  for (std::size_t i = n; i-- > 0;) clients_[i].reset();
}

Producer::TopicId Producer::topic(const std::string& name) {
  current().add_topic(name);
  topic_names_.push_back(name);
  return topic_names_.size() - 1;
}

bool Producer::produce(TopicId topic, std::span<const std::uint8_t> payload, const std::string& key,
                       ProduceCounters& counters, std::size_t events) noexcept {
  callbacks_->queued_bytes.fetch_add(payload.size(), std::memory_order_relaxed);  // see Callbacks
  auto deadline = std::chrono::steady_clock::now() + queue_full_wait_;
  std::uint64_t reports_seen = 0;
  for (;;) {
    const Client& client = current();
    const int rc = rd_kafka_produce(client.topics[topic], RD_KAFKA_PARTITION_UA,
                                    RD_KAFKA_MSG_F_COPY, const_cast<std::uint8_t*>(payload.data()),
                                    payload.size(), key.data(), key.size(), events_opaque(events));
    if (rc == 0) {
      counters.messages.add();
      counters.bytes.add(payload.size());
      return true;
    }
    const rd_kafka_resp_err_t err = rd_kafka_last_error();
    if (err == RD_KAFKA_RESP_ERR__FATAL) {
      // The callback thread replaces the instance as soon as it serves the fatal error; wait
      // for that (bounded like the wait for room), then produce on the replacement.
      if (std::chrono::steady_clock::now() >= deadline) {
        counters.failed_other.add();
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
      counters.failed_other.add();
      break;
    }
    // Room appears as the poll thread serves delivery reports; this thread must not poll
    // (single writer of the delivery counters), so it waits. While reports keep arriving the
    // broker keeps up and the wait goes on (the receiver's ring absorbs the pause or counts
    // ring-full drops); only a broker that acknowledges nothing for the whole wait costs a
    // message.
    const std::uint64_t reports = callbacks_->reports();
    const auto now = std::chrono::steady_clock::now();
    if (reports != reports_seen) {
      reports_seen = reports;
      deadline = now + queue_full_wait_;
    }
    if (now >= deadline) {
      counters.failed_queue_full.add();
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  callbacks_->queued_bytes.fetch_sub(payload.size(), std::memory_order_relaxed);
  return false;
}

void Producer::update_gauges() noexcept {
  const std::uint64_t depth = queue_depth();
  const std::uint64_t bytes = queue_bytes();
  callbacks_->queue_depth.set(depth);
  callbacks_->queue_bytes.set(bytes);
  callbacks_->queue_fill_pct.set(
      static_cast<std::uint64_t>(queue_fill(limits_, bytes, depth) * 100));
}

void Producer::poll() noexcept {
  update_gauges();
  // The outage warning: from this (the stats) thread, never from a processing thread.
  bool resumed = false;
  const std::string line = watch_.update(
      {QueueWatch::Clock::now(), callbacks_->delivery_ok.get(), queue_bytes(), queue_depth()},
      resumed);
  if (line.empty()) return;
  if (resumed) {
    spdlog::info("{}", line);
  } else {
    spdlog::warn("{}", line);
  }
}

std::uint64_t Producer::flush(std::chrono::milliseconds timeout) noexcept {
  stop_polling();  // from here this thread serves the callbacks (inside rd_kafka_flush)
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  const auto remaining = [&] {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    return static_cast<int>(std::max<std::int64_t>(left.count(), 0));
  };
  // Replaced instances first: as their last reports are served, what they held is queued on
  // the current one. Another fatal error while flushing makes another current one, so flush
  // until the current one stays (at most kMaxClients rounds).
  for (;;) {
    const std::size_t n = client_count_.load(std::memory_order_acquire);
    for (std::size_t i = 0; i + 1 < n; ++i) {
      Client& old = *clients_[i];
      if (old.depth() == 0) continue;
      rd_kafka_flush(old.rk, remaining());
      if (old.depth() != 0) purge(old);
    }
    Client& now = current();
    rd_kafka_flush(now.rk, remaining());
    if (&current() == &now) break;
  }
  std::uint64_t left = queue_depth();
  if (left == 0) {
    spdlog::info("kafka: flushed, every message delivered or reported");
  } else {
    spdlog::warn(
        "kafka: {} messages ({} bytes) not delivered within {} ms at flush; purging "
        "them (kafka.delivery.failed.purged)",
        left, queue_bytes(), timeout.count());
    left = purge(current());
  }
  update_gauges();
  return left;
}

// Purged messages fail with __PURGE_QUEUE or __PURGE_INFLIGHT, but only once their reports are
// served: rd_kafka_destroy() serves none, so without this they would never be counted.
std::uint64_t Producer::purge(Client& client) noexcept {
  const std::uint64_t left = client.depth();
  rd_kafka_purge(client.rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
  rd_kafka_flush(client.rk, kPurgeReportsMs);  // returns as soon as every report is served
  if (const std::uint64_t unreported = client.depth(); unreported != 0) {
    // Not expected. The summary still counts them (undelivered = produced - delivered).
    spdlog::error(
        "kafka: {} purged messages got no delivery report within {} ms, so no "
        "kafka.delivery.failed.* counter has them",
        unreported, kPurgeReportsMs);
  }
  return left;
}

std::uint64_t Producer::queue_depth() const noexcept {
  const std::size_t n = client_count_.load(std::memory_order_acquire);
  std::uint64_t depth = 0;
  for (std::size_t i = 0; i < n; ++i) depth += clients_[i]->depth();
  return depth;
}

std::uint64_t Producer::queue_bytes() const noexcept {
  return callbacks_->queued_bytes.load(std::memory_order_relaxed);
}

}  // namespace efu::kafka
