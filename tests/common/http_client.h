// A tiny blocking HTTP/1.1 client for tests over loopback: one request per
// connection (Connection: close), Content-Length or chunked responses, a
// receive timeout. Also sends raw bytes (garbage, oversized heads) for
// robustness tests. Used by the HTTP gateway test and to drive chromedriver
// (W3C WebDriver is JSON over HTTP). Header-only.
#ifndef DUALSWARM_TESTS_COMMON_HTTP_CLIENT_H_
#define DUALSWARM_TESTS_COMMON_HTTP_CLIENT_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <map>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace dualswarm::testing {

struct HttpResponse {
  int status = 0;                              // 0: no (parsable) response
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
};

// A connected socket to 127.0.0.1:port with a receive timeout, or -1.
inline int ConnectLoopback(int port, int timeout_s = 10) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  timeval tv{timeout_s, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

inline HttpResponse ParseHttpResponse(const std::string& raw) {
  HttpResponse r;
  size_t head_end = raw.find("\r\n\r\n");
  if (head_end == std::string::npos || !absl::StartsWith(raw, "HTTP/1.")) return r;
  std::string head = raw.substr(0, head_end);
  size_t sp = head.find(' ');
  if (sp == std::string::npos || !absl::SimpleAtoi(head.substr(sp + 1, 3), &r.status)) r.status = 0;
  size_t pos = head.find("\r\n");
  while (pos != std::string::npos && pos < head.size()) {
    size_t next = head.find("\r\n", pos + 2);
    std::string line = head.substr(pos + 2, next == std::string::npos ? std::string::npos : next - pos - 2);
    size_t colon = line.find(':');
    if (colon != std::string::npos)
      r.headers[absl::AsciiStrToLower(line.substr(0, colon))] =
          std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)));
    pos = next;
  }
  std::string body = raw.substr(head_end + 4);
  if (absl::EqualsIgnoreCase(r.headers["transfer-encoding"], "chunked")) {
    std::string out;
    size_t at = 0;
    while (at < body.size()) {
      size_t eol = body.find("\r\n", at);
      if (eol == std::string::npos) break;
      size_t n = std::stoul(body.substr(at, eol - at), nullptr, 16);
      if (n == 0) break;
      out += body.substr(eol + 2, n);
      at = eol + 2 + n + 2;
    }
    body = out;
  }
  r.body = body;
  return r;
}

// Whether `raw` holds a whole response with a Content-Length (or a whole
// chunked one); responses delimited by the close are never complete.
inline bool ResponseComplete(const std::string& raw) {
  size_t head_end = raw.find("\r\n\r\n");
  if (head_end == std::string::npos) return false;
  std::string head = absl::AsciiStrToLower(raw.substr(0, head_end));
  size_t at = head.find("\r\ncontent-length:");
  if (at != std::string::npos) {
    size_t eol = head.find("\r\n", at + 2);
    std::string v(
        absl::StripAsciiWhitespace(head.substr(at + 17, eol == std::string::npos ? std::string::npos : eol - at - 17)));
    size_t len = 0;
    return absl::SimpleAtoi(v, &len) && raw.size() >= head_end + 4 + len;
  }
  if (head.find("transfer-encoding: chunked") != std::string::npos) return absl::EndsWith(raw, "\r\n0\r\n\r\n");
  return false;
}

// Sends `bytes` as they are and reads until the server closes (or the
// timeout) or a whole response has arrived. Returns everything read ("" when
// nothing).
inline std::string SendRaw(int port, const std::string& bytes, int timeout_s = 10, bool half_close = true) {
  int fd = ConnectLoopback(port, timeout_s);
  if (fd < 0) return "";
  size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t n = send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server may close early on garbage: fine
    sent += static_cast<size_t>(n);
  }
  // Half-closing says "no more requests" (garbage tests); some servers
  // (chromedriver) take it for the client going away, so HttpRequest does not.
  if (half_close) shutdown(fd, SHUT_WR);
  std::string resp;
  char buf[16384];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) {
    resp.append(buf, static_cast<size_t>(n));
    if (ResponseComplete(resp)) break;  // some servers keep the connection open
  }
  close(fd);
  return resp;
}

// METHOD http://127.0.0.1:port/target with `headers` and `body`.
inline HttpResponse HttpRequest(int port, const std::string& method, const std::string& target,
                                const std::string& body = "", const std::map<std::string, std::string>& headers = {},
                                int timeout_s = 30) {
  std::string req =
      absl::StrCat(method, " ", target, " HTTP/1.1\r\nHost: 127.0.0.1:", port, "\r\nConnection: close\r\n");
  for (const auto& [k, v] : headers) absl::StrAppend(&req, k, ": ", v, "\r\n");
  if (!body.empty() || method == "POST")
    absl::StrAppend(&req, "Content-Type: application/json; charset=utf-8\r\nContent-Length: ", body.size(), "\r\n");
  absl::StrAppend(&req, "\r\n", body);
  return ParseHttpResponse(SendRaw(port, req, timeout_s, /*half_close=*/false));
}

// A free loopback port (bound, then released: good enough for tests).
inline int FreeLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return 0;
  }
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

}  // namespace dualswarm::testing

#endif  // DUALSWARM_TESTS_COMMON_HTTP_CLIENT_H_
