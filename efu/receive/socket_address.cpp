#include "receive/socket_address.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>

#include <charconv>
#include <cstring>

#include "efu/errors.h"

namespace efu {

std::string SocketAddress::format(const std::string& host, int port) {
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

std::string SocketAddress::text() const {
  char host[INET6_ADDRSTRLEN] = {};
  int port = 0;
  if (storage.ss_family == AF_INET) {
    const auto& a = reinterpret_cast<const sockaddr_in&>(storage);
    inet_ntop(AF_INET, &a.sin_addr, host, sizeof(host));
    port = ntohs(a.sin_port);
  } else {
    const auto& a = reinterpret_cast<const sockaddr_in6&>(storage);
    inet_ntop(AF_INET6, &a.sin6_addr, host, sizeof(host));
    port = ntohs(a.sin6_port);
  }
  return format(host, port);
}

SocketAddress numeric_address(const std::string& host, int port, int socktype, const char* option) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = socktype;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  const std::string port_text = std::to_string(port);
  if (const int rc = getaddrinfo(host.c_str(), port_text.c_str(), &hints, &res);
      rc != 0 || res == nullptr) {
    throw ConfigError(std::string(option) + ": '" + host + "' is not an address (" +
                      gai_strerror(rc) + "); expected a numeric IPv4 or IPv6 address");
  }
  SocketAddress a;
  std::memcpy(&a.storage, res->ai_addr, res->ai_addrlen);
  a.length = res->ai_addrlen;
  freeaddrinfo(res);
  return a;
}

int local_port(int fd) {
  sockaddr_storage sa{};
  socklen_t len = sizeof(sa);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0) return 0;
  if (sa.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in&>(sa).sin_port);
  return ntohs(reinterpret_cast<const sockaddr_in6&>(sa).sin6_port);
}

HostPort split_host_port(const std::string& text, const char* option, bool allow_zero) {
  const std::string expected = std::string("; expected HOST:PORT or [IPV6]:PORT with PORT ") +
                               (allow_zero ? "0" : "1") + "..65535";
  auto bad = [&](const std::string& why) {
    return ConfigError(std::string(option) + ": '" + text + "' " + why + expected);
  };
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0) throw bad("has no host and port");
  HostPort hp;
  hp.host = text.substr(0, colon);
  if (hp.host.front() == '[') {
    if (hp.host.size() < 3 || hp.host.back() != ']') throw bad("has an unclosed '['");
    hp.host = hp.host.substr(1, hp.host.size() - 2);
  } else if (hp.host.find(':') != std::string::npos) {
    throw bad("has an IPv6 address without brackets");
  }
  for (char c : hp.host) {
    if (c == ' ' || c == '/' || c == '[' || c == ']') throw bad("has a bad host");
  }
  const std::string port = text.substr(colon + 1);
  const auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), hp.port);
  if (port.empty() || ec != std::errc() || ptr != port.data() + port.size() || hp.port < 0 ||
      hp.port > 65535 || (hp.port == 0 && !allow_zero)) {
    throw bad("has a bad port");
  }
  return hp;
}

}  // namespace efu
