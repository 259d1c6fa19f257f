#include "workers/adapters/origin_listener.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "absl/strings/str_cat.h"

namespace dualswarm::workers {
namespace {

// A non-blocking listening socket on 127.0.0.1 at a port the kernel picks;
// its port in *port.
absl::StatusOr<int> ListenOnLoopback(int* port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::InternalError(absl::StrCat("socket: ", std::strerror(errno)));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 64) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const int err = errno;
    ::close(fd);
    return absl::InternalError(absl::StrCat("cannot listen on 127.0.0.1 for the origin: ", std::strerror(err)));
  }
  *port = ntohs(addr.sin_port);
  return fd;
}

}  // namespace

absl::StatusOr<std::unique_ptr<OriginListener>> OriginListener::Create(
    int endpoints, std::function<std::unique_ptr<Codec>()> make_codec) {
  if (endpoints < 1 || endpoints > kMaxOriginEndpoints)
    return absl::InvalidArgumentError(
        absl::StrCat("origin endpoints must be 1..", kMaxOriginEndpoints, ", got ", endpoints));
  std::vector<int> fds, ports;
  for (int k = 0; k < endpoints; ++k) {
    int port = 0;
    absl::StatusOr<int> fd = ListenOnLoopback(&port);
    if (!fd.ok()) {
      for (int f : fds) ::close(f);
      return fd.status();
    }
    fds.push_back(*fd);
    ports.push_back(port);
  }
  return std::unique_ptr<OriginListener>(new OriginListener(std::move(fds), std::move(ports), std::move(make_codec)));
}

OriginListener::~OriginListener() {
  for (OriginConn& c : conns_) c.Close();
  for (int fd : listen_fds_) ::close(fd);
}

std::string OriginListener::EndpointName(int k) { return OriginEndpointName(k); }

absl::Status OriginListener::Poll(int timeout_ms, std::vector<AdapterEvent>* events) {
  if (!pending_.empty()) {  // closes the tester caused: reported at once
    events->insert(events->end(), pending_.begin(), pending_.end());
    pending_.clear();
    timeout_ms = 0;
  }
  std::vector<pollfd> fds;
  for (int fd : listen_fds_) fds.push_back({fd, POLLIN, 0});
  std::vector<int> which;  // origin connection of fds[listen_fds_.size() + k]
  for (size_t i = 0; i < conns_.size(); ++i) {
    if (conns_[i].fd < 0) continue;
    fds.push_back({conns_[i].fd, static_cast<short>(POLLIN | (conns_[i].out.empty() ? 0 : POLLOUT)), 0});
    which.push_back(static_cast<int>(i));
  }
  const int n = ::poll(fds.data(), fds.size(), timeout_ms);
  if (n < 0)
    return errno == EINTR ? absl::OkStatus() : absl::InternalError(absl::StrCat("poll: ", std::strerror(errno)));
  for (size_t k = 0; k < fds.size(); ++k) {
    if (fds[k].revents == 0) continue;
    if (k < listen_fds_.size()) {
      if (absl::Status s = Accept(static_cast<int>(k)); !s.ok()) return s;
      continue;
    }
    const int conn = which[k - listen_fds_.size()];
    if (fds[k].revents & POLLOUT) Flush(conn);
    if (conns_[static_cast<size_t>(conn)].fd >= 0 && (fds[k].revents & (POLLIN | POLLHUP | POLLERR)))
      ReadFrom(conn, events);
  }
  events->insert(events->end(), pending_.begin(), pending_.end());
  pending_.clear();
  return absl::OkStatus();
}

// Takes every connection waiting on endpoint k's socket.
absl::Status OriginListener::Accept(int endpoint) {
  while (true) {
    const int fd =
        ::accept4(listen_fds_[static_cast<size_t>(endpoint)], nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ECONNABORTED) return absl::OkStatus();
      return absl::InternalError(absl::StrCat("accept on the origin's port: ", std::strerror(errno)));
    }
    if (conns_.size() >= kMaxOriginConnections) {
      ::close(fd);
      return absl::ResourceExhaustedError(absl::StrCat("the SUT opened more than ", kMaxOriginConnections,
                                                       " connections to the origin (limit: origin connections)"));
    }
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    ::setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);  // arrival times (best effort)
    OriginConn c;
    c.fd = fd;
    c.endpoint = endpoint;
    c.codec = make_codec_();
    conns_.push_back(std::move(c));
  }
}

// Reports the requests connection `conn` read, with the endpoint's name,
// then malformed bytes and the close they cause, or the close that ended it.
void OriginListener::ReadFrom(int conn, std::vector<AdapterEvent>* events) {
  OriginConn& c = conns_[static_cast<size_t>(conn)];
  CodecConnection::ReadResult r = c.Read();
  const ir::Value name = ir::Value::String(EndpointName(c.endpoint));
  for (auto& m : r.messages)
    if (m.is_map()) m = m.Set("origin", name);
  const size_t first = events->size();
  const char* peer = c.write_shut ? "the SUT after the tester's abort" : "the SUT";
  if (AppendReadEvents(conn, std::move(r), peer, "request", events)) c.Close();
  for (size_t k = first; k < events->size(); ++k) (*events)[k].origin = true;
}

void OriginListener::Flush(int conn) {
  OriginConn& c = conns_[static_cast<size_t>(conn)];
  c.Flush();
  if (c.close_after_write && !c.write_shut && c.out.empty()) {
    ::shutdown(c.fd, SHUT_WR);  // FIN; what the SUT still sends is read until it closes too
    c.write_shut = true;
  }
}

size_t OriginListener::SilentOpen() {
  std::erase_if(silent_, [&](const Silence& s) { return conns_[static_cast<size_t>(s.conn)].fd < 0; });
  return silent_.size();
}

void OriginListener::EndSilencesOlderThan(std::chrono::milliseconds limit) {
  const auto now = std::chrono::steady_clock::now();
  std::erase_if(silent_, [&](const Silence& s) {
    OriginConn& c = conns_[static_cast<size_t>(s.conn)];
    if (c.fd < 0) return true;
    if (now - s.since < limit) return false;
    c.close_after_write = true;  // nothing is queued: FIN now
    Flush(s.conn);
    return true;
  });
}

void OriginListener::Drop(int conn, std::string why) {
  conns_[static_cast<size_t>(conn)].Close();
  pending_.push_back({AdapterEvent::Kind::kClosed, conn, ir::Value(), std::move(why), 0, /*origin=*/true});
}

absl::Status OriginListener::Answer(int conn, const ir::Value& answer) {
  if (conn < 0 || static_cast<size_t>(conn) >= conns_.size())
    return absl::InvalidArgumentError(absl::StrCat("no origin connection ", conn));
  OriginConn& c = conns_[static_cast<size_t>(conn)];
  if (c.fd < 0 || c.close_after_write)
    return absl::FailedPreconditionError(absl::StrCat("origin connection ", conn, " is closed"));
  if (c.silent) return absl::FailedPreconditionError(absl::StrCat("origin connection ", conn, " is silent"));
  const ir::Value* abort = answer.is_map() ? answer.Find("abort") : nullptr;
  if (abort != nullptr && abort->is_string() && abort->as_string() == "silence") {
    c.silent = true;
    silent_.push_back({conn, std::chrono::steady_clock::now()});
    return absl::OkStatus();
  }
  if (abort != nullptr && abort->is_string() && abort->as_string() == "reset") {
    linger hard{1, 0};  // close() then sends RST
    ::setsockopt(c.fd, SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
    Drop(conn, "reset by the tester (abort)");
    return absl::OkStatus();
  }
  if (abort != nullptr && abort->is_string() && abort->as_string() == "close") {
    c.close_after_write = true;
    Flush(conn);
    return absl::OkStatus();
  }
  absl::StatusOr<std::string> bytes = c.codec->Encode(answer);
  if (!bytes.ok()) return bytes.status();
  c.out += *bytes;
  if (c.codec->EndsConnection()) c.close_after_write = true;  // e.g. an HTTP request with "connection: close"
  Flush(conn);
  return absl::OkStatus();
}

}  // namespace dualswarm::workers
