// ds-ref-proxy: the reference HTTP/1.1 forward proxy the online tester runs
// against specs/http_proxy.dspec, playing its clients and its origin, plus
// seeded bugs ("mutants").
//
// Clients send requests in absolute-form (RFC 9112 §3.2.2); the proxy
// forwards each to the origin its target's authority names (127.0.0.1:PORT:
// the tester plays one origin per port) in origin-form with Host set to
// that authority, without the hop-by-hop fields (Connection, the
// fields it names, Keep-Alive, Proxy-Connection, TE, Transfer-Encoding,
// Upgrade: RFC 9110 §7.6.1) and with a Via field (§7.6.3); it relays the
// origin's response the same way, and answers 502 when the origin closes
// without a complete response or cannot be reached, 504 when it sends none
// within --origin-timeout-ms. Requests are forwarded
// at once, each on a connection of its origin's pool (reused across
// clients, one request at a time on each); a client gets its answers in the
// order of its requests.
// Threads: one per client connection and one per forwarded request.
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "http_message.h"
#include "intermediary_net.h"
#include "sut_net.h"

namespace {

const char kHelp[] =
    "usage: ds-ref-proxy --port N --origin-port N [--origin-connections N] [--origin-timeout-ms N]\n"
    "                    [--mutant N] [--dir D]\n"
    "\n"
    "An HTTP/1.1 forward proxy used as a system under test: forwards requests in\n"
    "absolute-form to the origin their target names (http://127.0.0.1:PORT/...;\n"
    "no other host) and relays its answers. Listens on 127.0.0.1 only and prints\n"
    "\"listening on 127.0.0.1:PORT\" when ready.\n"
    "\n"
    "  --port N                 TCP port for clients (0 picks a free one)\n"
    "  --origin-port N          the first origin's port on 127.0.0.1 (checked, not\n"
    "                           needed: the targets name their origins)\n"
    "  --origin-connections N   connections to each origin at most (default 2)\n"
    "  --origin-timeout-ms N    answer 504 when an origin sends no answer for N ms\n"
    "                           (default 0: wait for ever)\n"
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
    "     9  drops the body of a POST\n"
    "    10  forwards every request to the first origin it reached (one pool for all)\n"
    "    11  answers 200 when the origin sends no answer in time\n";
constexpr int kMaxMutant = 11;
using Flags = dsut::IntermediaryFlags;
using dsut::HttpMessage;

class Proxy {
 public:
  explicit Proxy(const Flags& f) : flags_(f) {}

  void ServeClient(int fd) {
    dsut::HttpReader reader(fd);
    dsut::ServeInRequestOrder(fd, [&]() -> std::function<dsut::ClientAnswer()> {
      HttpMessage q;
      if (!reader.Read(&q, /*is_response=*/false)) return nullptr;
      return [this, q] { return dsut::ClientAnswer{Forward(q)}; };
    });
  }

 private:
  bool M(int n) const { return flags_.mutant == n; }

  std::string Forward(const HttpMessage& q) {
    std::string response = Respond(q);
    if (M(6)) {
      std::lock_guard<std::mutex> lock(last_mu_);
      if (!last_response_.empty())
        std::swap(response, last_response_);
      else
        last_response_ = response;
    }
    return response;
  }

  // The response the client gets for q.
  std::string Respond(const HttpMessage& q) {
    const std::string method = q.Method();
    const std::string target = q.Target();  // absolute-form: http://AUTHORITY/PATH
    if (target.rfind("http://", 0) != 0) return Status(400, "absolute-form target expected", method);
    const std::string rest = target.substr(7);
    const size_t slash = rest.find('/');
    const std::string authority = rest.substr(0, slash);
    dsut::OriginPool* pool = PoolFor(authority);
    if (pool == nullptr) return Status(502, "the target's origin is not 127.0.0.1:PORT", method);
    const std::string path = slash == std::string::npos ? "/" : rest.substr(slash);
    std::string out = method + " " + (M(4) ? target : path) + " HTTP/1.1\r\n";
    const std::string* client_host = q.Field("host");
    out += "host: " + (M(3) && client_host != nullptr ? *client_host : authority) + "\r\n";
    HttpMessage fields = q;
    fields.fields.erase(std::remove_if(fields.fields.begin(), fields.fields.end(),
                                       [&](const auto& f) { return f.first == "host" || (M(2) && IsE2e(f.first)); }),
                        fields.fields.end());
    out += dsut::EndToEndFields(fields, M(1));
    if (!M(5)) out += "via: 1.1 ds-ref-proxy\r\n";
    const std::string body = M(9) && method == "POST" ? "" : q.body;
    if (!body.empty() || method == "PUT" || method == "POST")
      out += "content-length: " + std::to_string(body.size()) + "\r\n";
    out += "\r\n" + body;

    HttpMessage r;
    bool timed_out = false;
    if (!dsut::ExchangeWithOrigin(pool, out, method, &r, flags_.origin_timeout_ms, &timed_out)) {
      if (timed_out) return M(11) ? Status(200, "", method) : Status(504, "the origin sent no answer in time", method);
      return M(8) ? Status(200, "", method) : Status(502, "the origin closed without an answer", method);
    }
    std::string answer = r.start + "\r\n" + dsut::EndToEndFields(r, M(7)) + "via: 1.1 ds-ref-proxy\r\n";
    if (method != "HEAD") answer += "content-length: " + std::to_string(r.body.size()) + "\r\n";
    return answer + "\r\n" + (method == "HEAD" ? "" : r.body);
  }

  // The connection pool of the origin `authority` names ("127.0.0.1:PORT"),
  // made on first use; null for any other authority.
  dsut::OriginPool* PoolFor(const std::string& authority) {
    const std::string host = "127.0.0.1:";
    if (authority.rfind(host, 0) != 0) return nullptr;
    char* end = nullptr;
    const long port = std::strtol(authority.c_str() + host.size(), &end, 10);
    if (end == authority.c_str() + host.size() || *end != '\0' || port <= 0 || port > 65535) return nullptr;
    std::lock_guard<std::mutex> lock(pools_mu_);
    if (first_port_ == 0) first_port_ = static_cast<int>(port);
    auto& pool = pools_[M(10) ? first_port_ : static_cast<int>(port)];
    if (pool == nullptr) pool = std::make_unique<dsut::OriginPool>(static_cast<int>(port), flags_.origin_connections);
    return pool.get();
  }

  static bool IsE2e(const std::string& name) { return name.rfind("x-e2e-", 0) == 0; }

  // The proxy's own response to a request with `method` (no content for
  // HEAD: RFC 9110 §9.3.2).
  static std::string Status(int code, const std::string& body, const std::string& method) {
    return "HTTP/1.1 " + std::to_string(code) + " " +
           (code == 200   ? "OK"
            : code == 400 ? "Bad Request"
            : code == 504 ? "Gateway Timeout"
                          : "Bad Gateway") +
           "\r\nvia: 1.1 ds-ref-proxy\r\ncontent-length: " + std::to_string(body.size()) + "\r\n\r\n" +
           (method == "HEAD" ? "" : body);
  }

  const Flags flags_;
  std::mutex pools_mu_;                                     // guards pools_ (not the pools: each has its own lock)
  std::map<int, std::unique_ptr<dsut::OriginPool>> pools_;  // by origin port
  int first_port_ = 0;                                      // the first origin reached (mutant 10)
  std::mutex last_mu_;                                      // guards last_response_ (mutant 6)
  std::string last_response_;
};

}  // namespace

int main(int argc, char** argv) {
  const Flags flags = dsut::ParseIntermediaryFlagsOrExit(argc, argv, "ds-ref-proxy", kHelp, kMaxMutant);
  static Proxy proxy(flags);  // outlives the detached threads
  return dsut::ServeThreadPerClient(flags.port, "ds-ref-proxy", [](int fd) { proxy.ServeClient(fd); });
}
