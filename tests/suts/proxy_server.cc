// ds-ref-proxy: the reference HTTP/1.1 forward proxy the online tester runs
// against specs/http_proxy.dspec, playing its clients and its origin, plus
// seeded bugs ("mutants").
//
// Clients send requests in absolute-form (RFC 9112 §3.2.2); the proxy
// forwards each to 127.0.0.1:--origin-port in origin-form with Host set to
// the target's authority, without the hop-by-hop fields (Connection, the
// fields it names, Keep-Alive, Proxy-Connection, TE, Transfer-Encoding,
// Upgrade: RFC 9110 §7.6.1) and with a Via field (§7.6.3); it relays the
// origin's response the same way, and answers 502 when the origin closes
// without a complete response. Requests are forwarded at once, each on an
// origin connection of a shared pool (reused across clients, one request at
// a time on each); a client gets its answers in the order of its requests.
// Threads: one per client connection and one per forwarded request.
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "intermediary_net.h"
#include "sut_net.h"

namespace {

const char kHelp[] =
    "usage: ds-ref-proxy --port N --origin-port N [--origin-connections N] [--mutant N] [--dir D]\n"
    "\n"
    "An HTTP/1.1 forward proxy used as a system under test: forwards requests in\n"
    "absolute-form to the origin at 127.0.0.1:ORIGIN-PORT and relays its answers.\n"
    "Listens on 127.0.0.1 only and prints \"listening on 127.0.0.1:PORT\" when ready.\n"
    "\n"
    "  --port N                 TCP port for clients (0 picks a free one)\n"
    "  --origin-port N          the origin's port on 127.0.0.1\n"
    "  --origin-connections N   origin connections at most (default 2)\n"
    "  --dir D                  ignored (the launcher's working directory)\n"
    "  --mutant N   0 = correct proxy; N > 0 = seeded bug N (all safety):\n"
    "     1  forwards the fields the client's Connection names\n"
    "     2  drops the client's x-e2e-* fields\n"
    "     3  forwards the client's Host instead of the target's authority\n"
    "     4  forwards the target in absolute-form\n"
    "     5  adds no Via to the requests it forwards\n"
    "     6  relays the origin's previous answer (proxy-wide) instead of this one\n"
    "     7  relays the fields the origin's Connection names\n"
    "     8  answers 200 when the origin closes without an answer\n"
    "     9  drops the body of a POST\n";
constexpr int kMaxMutant = 9;
constexpr size_t kMaxHead = 64 * 1024;
constexpr size_t kMaxBody = 1 << 20;

using Flags = dsut::IntermediaryFlags;

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// One HTTP message: its start line, fields (names lowercased, in order)
// and body.
struct Message {
  std::string start;
  std::vector<std::pair<std::string, std::string>> fields;
  std::string body;

  const std::string* Field(const std::string& name) const {
    for (const auto& [n, v] : fields)
      if (n == name) return &v;
    return nullptr;
  }
};

// Reads bytes from a blocking socket into a buffer, message by message.
class Reader {
 public:
  explicit Reader(int fd) : fd_(fd) {}

  // The next message; `bodiless`: a response to HEAD, or a 1xx/204/304.
  // False on EOF, an error or a message beyond the bounds.
  bool Read(Message* m, bool is_response, const std::string& request_method = "") {
    size_t end;
    while ((end = buf_.find("\r\n\r\n")) == std::string::npos) {
      if (buf_.size() > kMaxHead || !Fill()) return false;
    }
    std::string head = buf_.substr(0, end);
    buf_.erase(0, end + 4);
    *m = Message();
    size_t eol = head.find("\r\n");
    m->start = head.substr(0, eol);
    for (size_t pos = eol == std::string::npos ? head.size() : eol + 2; pos < head.size();) {
      size_t e = head.find("\r\n", pos);
      if (e == std::string::npos) e = head.size();
      std::string line = head.substr(pos, e - pos);
      pos = e + 2;
      size_t colon = line.find(':');
      if (colon == std::string::npos) return false;
      m->fields.emplace_back(Lower(line.substr(0, colon)), Trim(line.substr(colon + 1)));
    }
    const int status = is_response && m->start.size() >= 12 ? std::atoi(m->start.substr(9, 3).c_str()) : 0;
    if (is_response && status >= 100 && status < 200) {  // interim: the final response follows
      if (++interim_ > 16) return false;
      return Read(m, is_response, request_method);
    }
    interim_ = 0;
    if (is_response && (request_method == "HEAD" || status == 204 || status == 304)) return true;
    const std::string* te = m->Field("transfer-encoding");
    if (te != nullptr && Lower(*te).find("chunked") != std::string::npos) return ReadChunked(&m->body);
    const std::string* cl = m->Field("content-length");
    if (cl == nullptr && !is_response) return true;  // a request without framing has no body
    if (cl == nullptr) {                             // a response without framing runs to the close
      while (Fill())
        if (buf_.size() > kMaxBody) return false;
      m->body = std::move(buf_);
      buf_.clear();
      closed_ = true;
      return true;
    }
    const size_t n = std::strtoul(cl->c_str(), nullptr, 10);
    if (n > kMaxBody) return false;
    while (buf_.size() < n)
      if (!Fill()) return false;
    m->body = buf_.substr(0, n);
    buf_.erase(0, n);
    return true;
  }

 private:
  bool Fill() {
    char chunk[65536];
    ssize_t r = ::recv(fd_, chunk, sizeof chunk, 0);
    if (r <= 0) return false;
    buf_.append(chunk, static_cast<size_t>(r));
    return true;
  }

  bool ReadLine(std::string* line) {
    size_t eol;
    while ((eol = buf_.find("\r\n")) == std::string::npos)
      if (buf_.size() > kMaxHead || !Fill()) return false;
    *line = buf_.substr(0, eol);
    buf_.erase(0, eol + 2);
    return true;
  }

  bool ReadChunked(std::string* body) {
    while (true) {
      std::string line;
      if (!ReadLine(&line)) return false;
      const size_t n = std::strtoul(line.c_str(), nullptr, 16);
      if (n == 0) break;
      if (n > kMaxBody - body->size()) return false;
      while (buf_.size() < n + 2)
        if (!Fill()) return false;
      body->append(buf_, 0, n);
      buf_.erase(0, n + 2);
    }
    std::string trailer;
    do {
      if (!ReadLine(&trailer)) return false;
    } while (!trailer.empty());
    return true;
  }

  int fd_;
  std::string buf_;
  bool closed_ = false;  // the peer closed (a close-delimited response was read)
  int interim_ = 0;      // interim responses read before the current final one

 public:
  bool closed() const { return closed_; }
};

// The hop-by-hop fields of a message (RFC 9110 §7.6.1): the fixed ones and
// those its Connection names.
std::vector<std::string> HopByHop(const Message& m) {
  std::vector<std::string> hop = {"connection",        "keep-alive", "proxy-connection", "te",
                                  "transfer-encoding", "upgrade",    "content-length"};
  if (const std::string* c = m.Field("connection")) {
    size_t pos = 0;
    while (pos <= c->size()) {
      size_t comma = c->find(',', pos);
      if (comma == std::string::npos) comma = c->size();
      hop.push_back(Lower(Trim(c->substr(pos, comma - pos))));
      pos = comma + 1;
    }
  }
  return hop;
}

// The message's fields less the hop-by-hop ones (all but Connection's
// names when `keep_named`), as header lines.
std::string EndToEndFields(const Message& m, bool keep_named) {
  std::vector<std::string> hop = keep_named ? HopByHop(Message()) : HopByHop(m);
  std::string out;
  for (const auto& [n, v] : m.fields)
    if (std::find(hop.begin(), hop.end(), n) == hop.end()) out += n + ": " + v + "\r\n";
  return out;
}

// One forwarded request: the response for the client once it is known.
struct Exchange {
  bool done = false;
  std::string response;
};

// One client connection's exchanges, shared with its forward threads
// (which may outlive the connection when it ends early).
struct Client {
  std::mutex mu;  // guards everything below and the exchanges in `pending`
  std::condition_variable cv;
  std::deque<std::shared_ptr<Exchange>> pending;  // in request order
  bool reading = true;
};

class Proxy {
 public:
  explicit Proxy(const Flags& f) : flags_(f), pool_(f.origin_port, f.origin_connections) {}

  void ServeClient(int fd) {
    auto client = std::make_shared<Client>();
    std::thread writer([this, fd, client] { WriteAnswers(fd, client.get()); });
    Reader reader(fd);
    Message q;
    while (reader.Read(&q, /*is_response=*/false)) {
      auto x = std::make_shared<Exchange>();
      {
        std::lock_guard<std::mutex> lock(client->mu);
        client->pending.push_back(x);
      }
      std::thread([this, x, q, client] { Forward(q, x, client.get()); }).detach();
    }
    {
      std::lock_guard<std::mutex> lock(client->mu);
      client->reading = false;
    }
    client->cv.notify_all();
    writer.join();
    ::close(fd);
  }

 private:
  bool M(int n) const { return flags_.mutant == n; }

  // Answers the client in request order.
  void WriteAnswers(int fd, Client* client) {
    std::unique_lock<std::mutex> lock(client->mu);
    auto& pending = client->pending;
    while (true) {
      client->cv.wait(
          lock, [&] { return (!pending.empty() && pending.front()->done) || (!client->reading && pending.empty()); });
      if (pending.empty()) return;  // the client left and nothing is pending
      std::shared_ptr<Exchange> x = pending.front();
      pending.pop_front();
      lock.unlock();
      const bool sent = dsut::SendAll(fd, x->response);
      lock.lock();
      if (!sent) {
        ::shutdown(fd, SHUT_RDWR);
        return;
      }
    }
  }

  void Forward(const Message& q, std::shared_ptr<Exchange> x, Client* client) {
    std::string response = Respond(q);
    if (M(6)) {
      std::lock_guard<std::mutex> lock(last_mu_);
      if (!last_response_.empty())
        std::swap(response, last_response_);
      else
        last_response_ = response;
    }
    std::lock_guard<std::mutex> lock(client->mu);
    x->done = true;
    x->response = std::move(response);
    client->cv.notify_all();
  }

  // The response the client gets for q.
  std::string Respond(const Message& q) {
    // "METHOD http://AUTHORITY/PATH HTTP/1.1"
    const size_t sp1 = q.start.find(' '), sp2 = q.start.rfind(' ');
    const std::string method = q.start.substr(0, sp1);
    const std::string target = sp1 < sp2 ? q.start.substr(sp1 + 1, sp2 - sp1 - 1) : "";
    if (target.rfind("http://", 0) != 0) return Status(400, "absolute-form target expected", method);
    const std::string rest = target.substr(7);
    const size_t slash = rest.find('/');
    const std::string authority = rest.substr(0, slash);
    const std::string path = slash == std::string::npos ? "/" : rest.substr(slash);
    std::string out = method + " " + (M(4) ? target : path) + " HTTP/1.1\r\n";
    const std::string* client_host = q.Field("host");
    out += "host: " + (M(3) && client_host != nullptr ? *client_host : authority) + "\r\n";
    Message fields = q;
    fields.fields.erase(std::remove_if(fields.fields.begin(), fields.fields.end(),
                                       [&](const auto& f) { return f.first == "host" || (M(2) && IsE2e(f.first)); }),
                        fields.fields.end());
    out += EndToEndFields(fields, M(1));
    if (!M(5)) out += "via: 1.1 ds-ref-proxy\r\n";
    const std::string body = M(9) && method == "POST" ? "" : q.body;
    if (!body.empty() || method == "PUT" || method == "POST")
      out += "content-length: " + std::to_string(body.size()) + "\r\n";
    out += "\r\n" + body;

    const int fd = pool_.Borrow();
    if (fd < 0) return Status(502, "origin unreachable", method);
    Reader reader(fd);
    Message r;
    if (!dsut::SendAll(fd, out) || !reader.Read(&r, /*is_response=*/true, method)) {
      ::close(fd);
      pool_.Release(-1);
      return M(8) ? Status(200, "", method) : Status(502, "the origin closed without an answer", method);
    }
    const std::string* close = r.Field("connection");
    if (reader.closed() || (close != nullptr && Lower(*close).find("close") != std::string::npos)) {
      ::close(fd);
      pool_.Release(-1);
    } else {
      pool_.Release(fd);
    }
    std::string answer = r.start + "\r\n" + EndToEndFields(r, M(7)) + "via: 1.1 ds-ref-proxy\r\n";
    if (method != "HEAD") answer += "content-length: " + std::to_string(r.body.size()) + "\r\n";
    return answer + "\r\n" + (method == "HEAD" ? "" : r.body);
  }

  static bool IsE2e(const std::string& name) { return name.rfind("x-e2e-", 0) == 0; }

  // The proxy's own response to a request with `method` (no content for
  // HEAD: RFC 9110 §9.3.2).
  static std::string Status(int code, const std::string& body, const std::string& method) {
    return "HTTP/1.1 " + std::to_string(code) + " " +
           (code == 200   ? "OK"
            : code == 400 ? "Bad Request"
                          : "Bad Gateway") +
           "\r\nvia: 1.1 ds-ref-proxy\r\ncontent-length: " + std::to_string(body.size()) + "\r\n\r\n" +
           (method == "HEAD" ? "" : body);
  }

  const Flags flags_;
  dsut::OriginPool pool_;
  std::mutex last_mu_;  // guards last_response_ (mutant 6)
  std::string last_response_;
};

}  // namespace

int main(int argc, char** argv) {
  const Flags flags = dsut::ParseIntermediaryFlagsOrExit(argc, argv, "ds-ref-proxy", kHelp, kMaxMutant);
  static Proxy proxy(flags);  // outlives the detached threads
  return dsut::ServeThreadPerClient(flags.port, "ds-ref-proxy", [](int fd) { proxy.ServeClient(fd); });
}
