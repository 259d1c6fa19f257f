// A codec-driven adapter over non-blocking TCP sockets and poll().
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <functional>

#include "absl/strings/str_cat.h"
#include "util/status_macros.h"
#include "workers/adapters/adapter.h"
#include "workers/adapters/adapter_kinds.h"
#include "workers/adapters/codec_connection.h"
#include "workers/adapters/grpc_adapter.h"

namespace dualswarm::workers {
namespace {

// A client connection: a CodecConnection to one SUT node.
struct Conn : CodecConnection {
  int port = 0;  // the SUT node this connection talks to
};

class TcpAdapter : public Adapter {
 public:
  // make_codec(port): a fresh codec for a connection to `port` (HTTP's
  // Host header names the node's port).
  TcpAdapter(std::function<std::unique_ptr<Codec>(int port)> make_codec, std::string host,
             const std::vector<int>& ports)
      : make_codec_(std::move(make_codec)), host_(std::move(host)), conns_(ports.size()) {
    for (size_t i = 0; i < ports.size(); ++i) conns_[i].port = ports[i];
  }
  ~TcpAdapter() override { CloseAll(); }

  absl::Status Send(int conn, const ir::Value& request) override {
    if (conn < 0 || static_cast<size_t>(conn) >= conns_.size())
      return absl::InvalidArgumentError(absl::StrCat("no connection ", conn));
    Conn& c = conns_[static_cast<size_t>(conn)];
    if (c.fd < 0) {
      absl::Status s = Open(&c);
      if (!s.ok()) return s;
    }
    auto bytes = c.codec->Encode(request);
    if (!bytes.ok()) return bytes.status();
    c.out += *bytes;
    c.Flush();
    return absl::OkStatus();
  }

  absl::Status Poll(int timeout_ms, std::vector<AdapterEvent>* events) override {
    std::vector<pollfd> fds;
    std::vector<int> idx;
    for (size_t i = 0; i < conns_.size(); ++i) {
      Conn& c = conns_[i];
      if (c.fd < 0) continue;
      short ev = POLLIN;
      if (c.connecting || !c.out.empty()) ev |= POLLOUT;
      fds.push_back({c.fd, ev, 0});
      idx.push_back(static_cast<int>(i));
    }
    if (fds.empty()) {
      if (timeout_ms > 0) ::poll(nullptr, 0, timeout_ms);
      return absl::OkStatus();
    }
    int n = ::poll(fds.data(), fds.size(), timeout_ms);
    if (n < 0) {
      if (errno == EINTR) return absl::OkStatus();
      return absl::InternalError(absl::StrCat("poll: ", std::strerror(errno)));
    }
    for (size_t k = 0; k < fds.size(); ++k) {
      if (!fds[k].revents) continue;
      int i = idx[k];
      Conn& c = conns_[static_cast<size_t>(i)];
      if (c.connecting && (fds[k].revents & (POLLOUT | POLLERR | POLLHUP))) {
        int err = 0;
        socklen_t len = sizeof err;
        ::getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err != 0) {
          Drop(i, absl::StrCat("connect: ", std::strerror(err)), events);
          return absl::UnavailableError(
              absl::StrCat("cannot connect to ", host_, ":", c.port, ": ", std::strerror(err)));
        }
        c.connecting = false;
      }
      if (fds[k].revents & POLLOUT) c.Flush();
      if (fds[k].revents & (POLLIN | POLLHUP | POLLERR)) ReadFrom(i, events);
    }
    return absl::OkStatus();
  }

  void Close(int conn) override {
    if (conn < 0 || static_cast<size_t>(conn) >= conns_.size()) return;
    conns_[static_cast<size_t>(conn)].Close();
  }

  void CloseAll() override {
    for (auto& c : conns_) c.Close();
  }

 private:
  absl::Status Open(Conn* c) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return absl::InternalError(absl::StrCat("socket: ", std::strerror(errno)));
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    ::setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);  // arrival times (best effort)
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(c->port));
    if (::inet_pton(AF_INET, host_.c_str(), &addr.sin_addr) != 1) {
      ::close(fd);
      return absl::InvalidArgumentError(absl::StrCat("not a numeric IPv4 address: ", host_));
    }
    int r = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    if (r < 0 && errno != EINPROGRESS) {
      int err = errno;
      ::close(fd);
      return absl::UnavailableError(absl::StrCat("cannot connect to ", host_, ":", c->port, ": ", std::strerror(err)));
    }
    c->fd = fd;
    c->connecting = r < 0;
    c->out.clear();
    c->in.clear();
    c->codec = make_codec_(c->port);
    return absl::OkStatus();
  }

  // Reports what connection i read: its responses, then malformed bytes
  // and the close they cause, or the close that ended it.
  void ReadFrom(int i, std::vector<AdapterEvent>* events) {
    if (AppendReadEvents(i, conns_[static_cast<size_t>(i)].Read(), "the server", "response", events)) Close(i);
  }

  void Drop(int i, std::string why, std::vector<AdapterEvent>* events) {
    Close(i);
    events->push_back({AdapterEvent::Kind::kClosed, i, ir::Value(), std::move(why)});
  }

  std::function<std::unique_ptr<Codec>(int port)> make_codec_;
  std::string host_;
  std::vector<Conn> conns_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Adapter>> MakeAdapter(absl::string_view kind, const std::string& host,
                                                     const std::vector<int>& ports, const AdapterConfig& config) {
  for (int port : ports)
    if (port <= 0 || port > 65535) return absl::InvalidArgumentError(absl::StrCat("bad port ", port));
  if (kind == "grpc") return MakeGrpcAdapter(host, ports, config.descriptor_set);
  if (kind == "fs")
    return absl::InvalidArgumentError("the fs adapter acts on a job directory, not an address (MakeFsAdapter)");
  std::function<std::unique_ptr<Codec>(int)> make_codec;
  if (kind == "http") {
    make_codec = [host, names = config.origin_names](int port) {
      return MakeHttpCodec(absl::StrCat(host, ":", port), names);
    };
  } else if (kind == "jsonl") {
    make_codec = [](int) { return MakeJsonLinesCodec(); };
  } else if (kind == "resp") {
    make_codec = [](int) { return MakeRespCodec(); };
  } else if (kind == "memcached") {
    make_codec = [](int) { return MakeMemcachedCodec(); };
  } else {
    RETURN_IF_ERROR(CheckAdapterKind(kind));  // a kind listed there but not built here is a bug
    return absl::InternalError(absl::StrCat("adapter \"", kind, "\" has no codec"));
  }
  return std::unique_ptr<Adapter>(new TcpAdapter(std::move(make_codec), host, ports));
}

}  // namespace dualswarm::workers
