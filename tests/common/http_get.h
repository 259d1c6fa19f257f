// Test helpers for plain-HTTP endpoints of our binaries (Prometheus
// /metrics): a blocking GET over a loopback socket, and reading one sample
// out of the Prometheus text format. Header-only.
#ifndef DUALSWARM_TESTS_COMMON_HTTP_GET_H_
#define DUALSWARM_TESTS_COMMON_HTTP_GET_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace dualswarm::testing {

// GET http://127.0.0.1:PORT/PATH (HTTP/1.0, 5 s timeout); the body, or ""
// on any error. *status gets the HTTP status (0 when unreadable).
inline std::string HttpGet(int port, const std::string& path, int* status = nullptr) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return "";
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return "";
  }
  std::string req = absl::StrCat("GET ", path, " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n");
  if (write(fd, req.data(), req.size()) != static_cast<ssize_t>(req.size())) {
    close(fd);
    return "";
  }
  std::string resp;
  char buf[8192];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) resp.append(buf, static_cast<size_t>(n));
  close(fd);
  size_t body = resp.find("\r\n\r\n");
  if (body == std::string::npos) return "";
  if (status != nullptr) {
    std::vector<std::string> first = absl::StrSplit(resp.substr(0, resp.find("\r\n")), ' ');
    if (first.size() < 2 || !absl::SimpleAtoi(first[1], status)) *status = 0;
  }
  return resp.substr(body + 4);
}

// The value of the sample named exactly `series` (metric name plus labels as
// the exposition prints them, e.g. `dualswarm_worker_jobs_total{outcome="passed"}`).
inline std::optional<double> MetricSample(const std::string& text, const std::string& series) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (line.size() <= series.size() || line.substr(0, series.size()) != series || line[series.size()] != ' ') continue;
    double v = 0;
    if (absl::SimpleAtod(line.substr(series.size() + 1), &v)) return v;
  }
  return std::nullopt;
}

}  // namespace dualswarm::testing

#endif  // DUALSWARM_TESTS_COMMON_HTTP_GET_H_
