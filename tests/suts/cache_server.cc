// ds-ref-cache: the reference shared HTTP/1.1 cache the online tester runs
// against specs/http_cache.dspec, playing its clients and its origin, plus
// seeded bugs ("mutants").
//
// A reverse proxy (gateway) in front of 127.0.0.1:--origin-port: clients
// send origin-form requests; a GET or HEAD is answered from the store while
// the stored response is fresh (max-age, or 10 s of heuristic freshness for
// a 200 or 404 without one: RFC 9111 §4.2), with an Age field (§4, §5.1:
// the Age the origin sent plus the seconds since, §4.2.3);
// otherwise it is forwarded as a GET, conditional on the stored entity-tag
// when there is one (§4.3.1). A 304 updates the stored response's fields
// (§4.3.4) and the client gets the updated stored response. A response is
// stored when RFC 9111 §3 allows a shared cache to (not no-store, not
// private; max-age or a heuristically cacheable status). A successful PUT,
// POST or DELETE invalidates its path (§4.4). Forwarded requests carry Via
// (RFC 9110 §7.6.3); the origin's failure is a 502.
// Threads: one per client connection and one per request.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "http_message.h"
#include "intermediary_net.h"

namespace {

const char kHelp[] =
    "usage: ds-ref-cache --port N --origin-port N [--origin-connections N] [--mutant N] [--dir D]\n"
    "\n"
    "A shared HTTP/1.1 cache used as a system under test: a reverse proxy in front\n"
    "of the origin at 127.0.0.1:ORIGIN-PORT that answers GET and HEAD from its store\n"
    "while the stored response is fresh (RFC 9111). Listens on 127.0.0.1 only and\n"
    "prints \"listening on 127.0.0.1:PORT\" when ready.\n"
    "\n"
    "  --port N                 TCP port for clients (0 picks a free one)\n"
    "  --origin-port N          the origin's port on 127.0.0.1\n"
    "  --origin-connections N   origin connections at most (default 2)\n"
    "  --dir D                  ignored (the launcher's working directory)\n"
    "  --mutant N   0 = correct cache; N > 0 = seeded bug N (all safety):\n"
    "     1  stores and serves no-store responses\n"
    "     2  stores and serves private responses\n"
    "     3  serves a stale response (max-age=0, no-cache) without revalidating it\n"
    "     4  does not update the stored response with a 304's fields\n"
    "     5  does not invalidate a path after a successful PUT, POST or DELETE\n"
    "     6  sends no Age with a response from the store\n"
    "     7  revalidates with the entity-tag of the path's previous response\n"
    "     8  relays a 304 to a client that did not ask conditionally\n"
    "     9  keys the store by the method alone (a hit for one path serves another's)\n"
    "    10  ignores the origin's Age: a stored response's Age counts from when it was stored\n";
constexpr int kMaxMutant = 10;
constexpr int kHeuristicSeconds = 10;

using Clock = std::chrono::steady_clock;
using dsut::HttpMessage;

// One stored response.
struct Entry {
  HttpMessage response;  // its start line, end-to-end fields and content
  Clock::time_point stored_at;
  std::string previous_etag;  // the entity-tag of the entry it replaced (mutant 7)
};

// The freshness lifetime of a response in seconds (RFC 9111 §4.2.1), or
// nullopt when it has none and may not be served without validation.
std::optional<int64_t> FreshnessLifetime(const HttpMessage& r) {
  const std::string* cc = r.Field("cache-control");
  const std::string directives = cc != nullptr ? dsut::Lower(*cc) : "";
  if (directives.find("no-cache") != std::string::npos) return std::nullopt;
  if (size_t at = directives.find("max-age="); at != std::string::npos)
    return std::strtoll(directives.c_str() + at + 8, nullptr, 10);
  const int status = r.Status();
  if (status == 200 || status == 404) return kHeuristicSeconds;
  return std::nullopt;
}

class Cache {
 public:
  explicit Cache(const dsut::IntermediaryFlags& f) : flags_(f), pool_(f.origin_port, f.origin_connections) {}

  // A connection's requests are decided in order (answer from the store,
  // or forward with which validator), as they are read, and then carried
  // out concurrently.
  void ServeClient(int fd) {
    dsut::HttpReader reader(fd);
    dsut::ServeInRequestOrder(fd, [&]() -> std::function<dsut::ClientAnswer()> {
      HttpMessage q;
      if (!reader.Read(&q, /*is_response=*/false)) return nullptr;
      Plan plan = Decide(q);
      return [this, q, plan = std::move(plan)] { return dsut::ClientAnswer{CarryOut(q, plan)}; };
    });
  }

 private:
  // What the cache does with a request: answer it from `entry` (a hit), or
  // forward it, conditional on `validator` when there is one.
  struct Plan {
    bool hit = false;
    std::optional<Entry> entry;
    std::string validator;
  };

  bool M(int n) const { return flags_.mutant == n; }

  Plan Decide(const HttpMessage& q) {
    Plan plan;
    const std::string method = q.Method();
    if (method != "GET" && method != "HEAD") return plan;
    plan.entry = Lookup(method, q.Target());
    if (!plan.entry) return plan;
    plan.hit = Reusable(*plan.entry);
    if (const std::string* etag = plan.entry->response.Field("etag"); etag != nullptr && !plan.hit)
      plan.validator = M(7) && !plan.entry->previous_etag.empty() ? plan.entry->previous_etag : *etag;
    return plan;
  }

  std::string CarryOut(const HttpMessage& q, const Plan& plan) {
    const std::string method = q.Method();
    const std::string path = q.Target();
    if (method != "GET" && method != "HEAD") return WriteThrough(q, method, path);
    if (plan.hit) return FromStore(*plan.entry, method, /*validated=*/false);
    // Forwarded as a GET (a HEAD's answer fills the store too).
    HttpMessage r;
    if (!Forward(q, "GET", plan.validator, &r)) return Status(502, method);
    if (r.Status() == 304 && !plan.validator.empty()) {
      if (M(8)) return Relayed(r, method);
      Entry e = *plan.entry;
      const std::string validated_etag = *e.response.Field("etag");
      if (!M(4)) Merge(r, &e.response);
      e.stored_at = Clock::now();
      Refresh(method, path, validated_etag, e);
      return FromStore(e, method, /*validated=*/true);
    }
    if (Storable(r)) Store(method, path, Entry{r, Clock::now(), ""});
    return Relayed(r, method);
  }

  // PUT, POST, DELETE: forwarded; a success invalidates the path (RFC 9111 §4.4).
  std::string WriteThrough(const HttpMessage& q, const std::string& method, const std::string& path) {
    HttpMessage r;
    if (!Forward(q, method, "", &r)) return Status(502, method);
    if (r.Status() < 400 && !M(5)) {
      std::lock_guard<std::mutex> lock(mu_);
      store_.erase(Key("GET", path));
    }
    return Relayed(r, method);
  }

  bool Reusable(const Entry& e) const {
    const std::optional<int64_t> lifetime = FreshnessLifetime(e.response);
    if (!lifetime) return M(3);
    // Fresh while its current age is below its lifetime (RFC 9111 §4.2).
    return Clock::now() - e.stored_at + std::chrono::seconds(AgeWhenStored(e.response)) <
               std::chrono::seconds(*lifetime) ||
           M(3);
  }

  bool Storable(const HttpMessage& r) const {
    const std::string* cc = r.Field("cache-control");
    const std::string directives = cc != nullptr ? dsut::Lower(*cc) : "";
    if (directives.find("no-store") != std::string::npos && !M(1)) return false;
    if (directives.find("private") != std::string::npos && !M(2)) return false;
    const int status = r.Status();
    return status >= 200 && status != 304 &&
           (directives.find("max-age") != std::string::npos || status == 200 || status == 404);
  }

  // The 304's fields replace the stored ones of the same name (RFC 9111
  // §4.3.4); the framing stays the stored response's.
  static void Merge(const HttpMessage& not_modified, HttpMessage* stored) {
    for (const auto& [name, value] : not_modified.fields)
      if (name != "content-length" && name != "transfer-encoding" && name != "connection") stored->Set(name, value);
  }

  // The store's key: the path (mutant 9: the method alone).
  std::string Key(const std::string& method, const std::string& path) const {
    return M(9) ? "any" : (method == "HEAD" ? "GET" : method) + " " + path;  // unsafe methods invalidate GET PATH
  }

  std::optional<Entry> Lookup(const std::string& method, const std::string& path) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = store_.find(Key(method, path));
    if (it == store_.end()) return std::nullopt;
    return it->second;
  }

  void Store(const std::string& method, const std::string& path, Entry e) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = store_.find(Key(method, path));
    if (it != store_.end() && e.previous_etag.empty()) {
      const std::string* old = it->second.response.Field("etag");
      if (old != nullptr) e.previous_etag = *old;
    }
    store_.insert_or_assign(Key(method, path), std::move(e));
  }

  // Puts the validated entry back, unless the path's entry changed since it
  // was looked up (a newer response stored, or the path invalidated).
  void Refresh(const std::string& method, const std::string& path, const std::string& validated_etag, Entry e) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = store_.find(Key(method, path));
    if (it == store_.end()) return;
    const std::string* current = it->second.response.Field("etag");
    if (current != nullptr && *current == validated_etag) it->second = std::move(e);
  }

  // Sends q to the origin as `method`, with If-None-Match: `validator`
  // when there is one.
  bool Forward(const HttpMessage& q, const std::string& method, const std::string& validator, HttpMessage* r) {
    HttpMessage fields = q;
    fields.Erase("host");
    fields.Erase("if-none-match");
    std::string out = method + " " + q.Target() + " HTTP/1.1\r\nhost: 127.0.0.1:" + std::to_string(flags_.origin_port) +
                      "\r\n" + dsut::EndToEndFields(fields) + "via: 1.1 ds-ref-cache\r\n";
    if (!validator.empty()) out += "if-none-match: " + validator + "\r\n";
    const std::string body = method == q.Method() ? q.body : "";
    if (!body.empty() || method == "PUT" || method == "POST")
      out += "content-length: " + std::to_string(body.size()) + "\r\n";
    return dsut::ExchangeWithOrigin(&pool_, out + "\r\n" + body, method, r);
  }

  std::string FromStore(const Entry& e, const std::string& method, bool validated) const {
    HttpMessage fields = e.response;
    fields.Erase("age");
    std::string out = e.response.start + "\r\n" + dsut::EndToEndFields(fields);
    if (!validated && !M(6)) {
      const int64_t resident = std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - e.stored_at).count();
      out += "age: " + std::to_string((M(10) ? 0 : AgeWhenStored(e.response)) + resident) + "\r\n";
    }
    return WithContent(out, e.response.body, method);
  }

  // The Age the origin sent (RFC 9111 §5.1: delta-seconds), 0 without one
  // or when it is not a number; 2^31 for any larger (§1.2.2).
  static int64_t AgeWhenStored(const HttpMessage& r) {
    constexpr int64_t kMaxAge = int64_t{1} << 31;
    const std::string* age = r.Field("age");
    if (age == nullptr || age->empty()) return 0;
    int64_t n = 0;
    for (char c : *age) {
      if (c < '0' || c > '9') return 0;
      n = std::min(kMaxAge, n * 10 + (c - '0'));
    }
    return n;
  }

  static std::string Relayed(const HttpMessage& r, const std::string& method) {
    HttpMessage fields = r;
    fields.Erase("age");
    return WithContent(r.start + "\r\n" + dsut::EndToEndFields(fields), r.body, method);
  }

  // Head lines plus the content (none for HEAD: RFC 9110 §9.3.2; a 304
  // has none either).
  static std::string WithContent(std::string head, const std::string& body, const std::string& method) {
    if (head.rfind("HTTP/1.1 304", 0) == 0) return head + "\r\n";
    head += "content-length: " + std::to_string(body.size()) + "\r\n\r\n";
    return method == "HEAD" ? head : head + body;
  }

  static std::string Status(int code, const std::string& method) {
    return WithContent("HTTP/1.1 " + std::to_string(code) + " Bad Gateway\r\n", "", method);
  }

  const dsut::IntermediaryFlags flags_;
  dsut::OriginPool pool_;
  std::mutex mu_;  // guards store_
  std::map<std::string, Entry> store_;
};

}  // namespace

int main(int argc, char** argv) {
  const dsut::IntermediaryFlags flags =
      dsut::ParseIntermediaryFlagsOrExit(argc, argv, "ds-ref-cache", kHelp, kMaxMutant);
  static Cache cache(flags);  // outlives the detached threads
  return dsut::ServeThreadPerClient(flags.port, "ds-ref-cache", [](int fd) { cache.ServeClient(fd); });
}
