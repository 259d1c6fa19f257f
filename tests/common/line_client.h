// A blocking line-protocol client for tests over loopback (JSON lines):
// read one reply line within a deadline, or ask a one-line question on a
// fresh connection. Header-only.
#ifndef DUALSWARM_TESTS_COMMON_LINE_CLIENT_H_
#define DUALSWARM_TESTS_COMMON_LINE_CLIENT_H_

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "tests/common/http_client.h"

namespace dualswarm::testing {

// The next line `fd` receives, with its '\n'; what came so far ("" if
// nothing) when the connection ends or `timeout_ms` passes first.
inline std::string ReadLineWithin(int fd, int timeout_ms) {
  std::string reply;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (reply.find('\n') == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    char c;
    ssize_t n = ::recv(fd, &c, 1, 0);  // byte by byte: what follows the line stays unread
    if (n <= 0) break;
    reply.push_back(c);
  }
  return reply;
}

// Sends `line` (with its '\n') on a fresh connection to 127.0.0.1:port and
// returns the reply line ("" when none came within `timeout_ms`).
inline std::string AskLine(int port, const std::string& line, int timeout_ms) {
  int fd = ConnectLoopback(port);
  if (fd < 0) return "";
  std::string reply;
  if (::send(fd, line.data(), line.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(line.size()))
    reply = ReadLineWithin(fd, timeout_ms);
  ::close(fd);
  return reply;
}

}  // namespace dualswarm::testing

#endif  // DUALSWARM_TESTS_COMMON_LINE_CLIENT_H_
