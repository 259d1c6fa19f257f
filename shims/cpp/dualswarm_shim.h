// dualswarm_shim.h: serves a C++ library to Dualswarm over the library
// protocol (docs/interfaces.md): JSON lines over TCP on 127.0.0.1, one call
// per line and one answer per line, in order:
//   {"call": "insert", "args": [{"$heap": 3}, 5]}  ->  {"ret": {"$heap": 4}}
//                                                  or  {"exn": "what() of the exception"}
//                                                  or  {"error": "unknown handle 9"}
// A value of an abstract type travels as a handle {"$TYPE": N}: the shim
// keeps the object, the tester only the number. Fields other than "call"
// and "args" (the tester's "law" tag) are ignored.
//
// Use: register the abstract types and the operations, then serve.
//
//   dualswarm_shim::Library lib;
//   lib.Type<Heap>("heap");
//   lib.Op("empty", [] { return Heap(); });
//   lib.Op("insert", [](const Heap& h, int64_t x) { return h.Insert(x); });
//   lib.Op("find_min", [](const Heap& h) { return h.Min(); });  // may throw
//   return dualswarm_shim::Serve(argc, argv, lib);  // --port N [--arg K=V]...
//
// Arguments and results may be int64_t, int, bool, std::string,
// std::vector<E> and std::optional<E> (null when empty) of those, and
// registered types (a result by value becomes a new handle; an argument is
// taken as `const T&`). An op returning void answers null. A std::exception
// the library throws is the answer {"exn": what()} (anything else thrown:
// {"exn": "an exception that is not a std::exception"}).
//
// Deliberately standalone: plain C++20 and POSIX, one header.
#ifndef DUALSWARM_SHIMS_CPP_DUALSWARM_SHIM_H_
#define DUALSWARM_SHIMS_CPP_DUALSWARM_SHIM_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <tuple>
#include <type_traits>
#include <typeindex>
#include <utility>
#include <vector>

namespace dualswarm_shim {

inline constexpr size_t kMaxLine = 1 << 20;       // bytes in one request line
inline constexpr size_t kMaxHandles = 1'000'000;  // objects kept
inline constexpr int kMaxDepth = 64;              // JSON nesting

// A JSON value (numbers are 64-bit integers: the protocol has no others).
struct Json {
  enum class Kind { kNull, kBool, kInt, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  bool b = false;
  int64_t i = 0;
  std::string s;
  std::vector<Json> items;                            // kArray
  std::vector<std::pair<std::string, Json>> members;  // kObject, in order

  const Json* Find(const std::string& key) const {
    for (const auto& [k, v] : members)
      if (k == key) return &v;
    return nullptr;
  }
  static Json Int(int64_t v) {
    Json j;
    j.kind = Kind::kInt;
    j.i = v;
    return j;
  }
  static Json Bool(bool v) {
    Json j;
    j.kind = Kind::kBool;
    j.b = v;
    return j;
  }
  static Json String(std::string v) {
    Json j;
    j.kind = Kind::kString;
    j.s = std::move(v);
    return j;
  }
  static Json Object(std::vector<std::pair<std::string, Json>> m) {
    Json j;
    j.kind = Kind::kObject;
    j.members = std::move(m);
    return j;
  }
};

inline void AppendJson(const Json& v, std::string* out) {
  switch (v.kind) {
    case Json::Kind::kNull:
      *out += "null";
      return;
    case Json::Kind::kBool:
      *out += v.b ? "true" : "false";
      return;
    case Json::Kind::kInt:
      *out += std::to_string(v.i);
      return;
    case Json::Kind::kString:
      out->push_back('"');
      for (unsigned char c : v.s) {
        if (c == '"' || c == '\\') {
          out->push_back('\\');
          out->push_back(static_cast<char>(c));
        } else if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          *out += buf;
        } else {
          out->push_back(static_cast<char>(c));
        }
      }
      out->push_back('"');
      return;
    case Json::Kind::kArray:
      out->push_back('[');
      for (size_t k = 0; k < v.items.size(); ++k) {
        if (k) out->push_back(',');
        AppendJson(v.items[k], out);
      }
      out->push_back(']');
      return;
    case Json::Kind::kObject:
      out->push_back('{');
      for (size_t k = 0; k < v.members.size(); ++k) {
        if (k) out->push_back(',');
        AppendJson(Json::String(v.members[k].first), out);
        out->push_back(':');
        AppendJson(v.members[k].second, out);
      }
      out->push_back('}');
      return;
  }
}

// A recursive-descent reader for one line; nullopt on anything else.
class JsonReader {
 public:
  explicit JsonReader(const std::string& text) : t_(text) {}
  std::optional<Json> ReadAll() {
    std::optional<Json> v = Value(0);
    Space();
    if (!v || p_ != t_.size()) return std::nullopt;
    return v;
  }

 private:
  void Space() {
    while (p_ < t_.size() && (t_[p_] == ' ' || t_[p_] == '\t' || t_[p_] == '\r' || t_[p_] == '\n')) ++p_;
  }
  bool Word(const char* w) {
    const size_t n = std::strlen(w);
    if (t_.compare(p_, n, w) != 0) return false;
    p_ += n;
    return true;
  }
  std::optional<std::string> Str() {
    if (p_ >= t_.size() || t_[p_] != '"') return std::nullopt;
    ++p_;
    std::string s;
    while (p_ < t_.size() && t_[p_] != '"') {
      char c = t_[p_++];
      if (c != '\\') {
        s.push_back(c);
        continue;
      }
      if (p_ >= t_.size()) return std::nullopt;
      c = t_[p_++];
      switch (c) {
        case 'n':
          s.push_back('\n');
          break;
        case 't':
          s.push_back('\t');
          break;
        case 'r':
          s.push_back('\r');
          break;
        case 'b':
          s.push_back('\b');
          break;
        case 'f':
          s.push_back('\f');
          break;
        case 'u': {  // only the one-byte code points this shim writes
          if (p_ + 4 > t_.size()) return std::nullopt;
          unsigned cp = 0;
          for (size_t k = 0; k < 4; ++k) {
            const char h = t_[p_ + k];
            const int d = h >= '0' && h <= '9'   ? h - '0'
                          : h >= 'a' && h <= 'f' ? h - 'a' + 10
                          : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                                 : -1;
            if (d < 0) return std::nullopt;
            cp = cp * 16 + static_cast<unsigned>(d);
          }
          if (cp > 0x7f) return std::nullopt;
          s.push_back(static_cast<char>(cp));
          p_ += 4;
          break;
        }
        default:
          s.push_back(c);  // " \ /
      }
    }
    if (p_ >= t_.size()) return std::nullopt;
    ++p_;
    return s;
  }
  std::optional<Json> Value(int depth) {
    if (depth > kMaxDepth) return std::nullopt;
    Space();
    if (p_ >= t_.size()) return std::nullopt;
    const char c = t_[p_];
    if (c == 'n') return Word("null") ? std::optional<Json>(Json()) : std::nullopt;
    if (c == 't') return Word("true") ? std::optional<Json>(Json::Bool(true)) : std::nullopt;
    if (c == 'f') return Word("false") ? std::optional<Json>(Json::Bool(false)) : std::nullopt;
    if (c == '"') {
      std::optional<std::string> s = Str();
      if (!s) return std::nullopt;
      return Json::String(*std::move(s));
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
      const bool negative = c == '-';
      if (negative) ++p_;
      // Accumulated negatively, so INT64_MIN fits; beyond int64 is refused.
      int64_t v = 0;
      size_t digits = 0;
      for (; p_ < t_.size() && t_[p_] >= '0' && t_[p_] <= '9'; ++p_, ++digits) {
        const int d = t_[p_] - '0';
        if (v < (INT64_MIN + d) / 10) return std::nullopt;
        v = v * 10 - d;
      }
      if (digits == 0 || (p_ < t_.size() && (t_[p_] == '.' || t_[p_] == 'e' || t_[p_] == 'E')))
        return std::nullopt;  // no digits, or not an integer
      if (!negative && v == INT64_MIN) return std::nullopt;
      return Json::Int(negative ? v : -v);
    }
    if (c == '[' || c == '{') {
      const bool array = c == '[';
      Json j;
      j.kind = array ? Json::Kind::kArray : Json::Kind::kObject;
      ++p_;
      Space();
      if (p_ < t_.size() && t_[p_] == (array ? ']' : '}')) {
        ++p_;
        return j;
      }
      while (true) {
        if (array) {
          std::optional<Json> v = Value(depth + 1);
          if (!v) return std::nullopt;
          j.items.push_back(*std::move(v));
        } else {
          Space();
          std::optional<std::string> k = Str();
          Space();
          if (!k || p_ >= t_.size() || t_[p_] != ':') return std::nullopt;
          ++p_;
          std::optional<Json> v = Value(depth + 1);
          if (!v) return std::nullopt;
          j.members.emplace_back(*std::move(k), *std::move(v));
        }
        Space();
        if (p_ >= t_.size()) return std::nullopt;
        if (t_[p_] == ',') {
          ++p_;
          continue;
        }
        if (t_[p_] != (array ? ']' : '}')) return std::nullopt;
        ++p_;
        return j;
      }
    }
    return std::nullopt;
  }
  const std::string& t_;
  size_t p_ = 0;
};

// Why a call was refused (an {"error": ...} answer), not the library's doing.
struct Refused {
  std::string why;
};

template <typename T>
struct IsVector : std::false_type {};
template <typename E>
struct IsVector<std::vector<E>> : std::true_type {};
template <typename T>
struct IsOptional : std::false_type {};
template <typename E>
struct IsOptional<std::optional<E>> : std::true_type {};

// The signature of a callable (a lambda or a function pointer).
template <typename F>
struct Signature : Signature<decltype(&F::operator())> {};
template <typename C, typename R, typename... A>
struct Signature<R (C::*)(A...) const> {
  using Ret = R;
  using Args = std::tuple<std::remove_cvref_t<A>...>;
};
template <typename C, typename R, typename... A>
struct Signature<R (C::*)(A...)> : Signature<R (C::*)(A...) const> {};
template <typename R, typename... A>
struct Signature<R (*)(A...)> {
  using Ret = R;
  using Args = std::tuple<std::remove_cvref_t<A>...>;
};

class Library {
 public:
  // Registers T as the abstract type `name` (its values travel as handles).
  template <typename T>
  void Type(std::string name) {
    names_[std::type_index(typeid(T))] = std::move(name);
  }

  // Registers op `name`: a callable whose arguments and result are as the
  // header comment says.
  template <typename F>
  void Op(std::string name, F fn) {
    ops_[std::move(name)] = [this, fn](const std::vector<Json>& args) -> Json {
      using Sig = Signature<F>;
      constexpr size_t n = std::tuple_size_v<typename Sig::Args>;
      if (args.size() != n)
        throw Refused{"takes " + std::to_string(n) + " argument(s), got " + std::to_string(args.size())};
      return Invoke<typename Sig::Ret, typename Sig::Args>(fn, args, std::make_index_sequence<n>());
    };
  }

  // One request line -> its answer line (without the newline).
  std::string Answer(const std::string& line) {
    std::optional<Json> req = JsonReader(line).ReadAll();
    const Json* call = req ? req->Find("call") : nullptr;
    const Json* args = req ? req->Find("args") : nullptr;
    if (call == nullptr || call->kind != Json::Kind::kString || (args != nullptr && args->kind != Json::Kind::kArray))
      return Error("expected {\"call\": NAME, \"args\": [...]}");
    auto op = ops_.find(call->s);
    if (op == ops_.end()) return Error("unknown operation '" + call->s + "'");
    std::lock_guard<std::mutex> lock(mu_);  // calls are atomic
    Json answer;
    try {
      answer = Json::Object({{"ret", op->second(args != nullptr ? args->items : std::vector<Json>())}});
    } catch (const Refused& r) {
      return Error(r.why);
    } catch (const std::exception& e) {
      answer = Json::Object({{"exn", Json::String(e.what())}});
    } catch (...) {
      answer = Json::Object({{"exn", Json::String("an exception that is not a std::exception")}});
    }
    std::string out;
    AppendJson(answer, &out);
    return out;
  }

 private:
  static std::string Error(const std::string& why) {
    std::string out;
    AppendJson(Json::Object({{"error", Json::String(why)}}), &out);
    return out;
  }

  template <typename R, typename Args, typename F, size_t... I>
  Json Invoke(const F& fn, const std::vector<Json>& args, std::index_sequence<I...>) {
    auto decoded = std::make_tuple(Decode<std::tuple_element_t<I, Args>>(args[I])...);
    if constexpr (std::is_void_v<R>) {
      fn(Deref(std::get<I>(decoded))...);
      return Json();
    } else {
      return Encode(fn(Deref(std::get<I>(decoded))...));
    }
  }

  // Arguments of a registered type are decoded to a shared pointer and
  // passed as a reference to the object.
  template <typename T>
  static const T& Deref(const std::shared_ptr<const T>& p) {
    return *p;
  }
  template <typename T>
  static const T& Deref(const T& v) {
    return v;
  }

  template <typename T>
  auto Decode(const Json& j) {
    if constexpr (std::is_same_v<T, bool>) {
      if (j.kind != Json::Kind::kBool) throw Refused{"expected a bool"};
      return j.b;
    } else if constexpr (std::is_integral_v<T>) {
      static_assert(std::is_same_v<T, int64_t> || std::is_same_v<T, int>, "integers are int64_t or int");
      if (j.kind != Json::Kind::kInt) throw Refused{"expected an integer"};
      if constexpr (std::is_same_v<T, int>)
        if (j.i < INT32_MIN || j.i > INT32_MAX) throw Refused{"an integer beyond int"};
      return static_cast<T>(j.i);
    } else if constexpr (std::is_same_v<T, std::string>) {
      if (j.kind != Json::Kind::kString) throw Refused{"expected a string"};
      return j.s;
    } else if constexpr (IsVector<T>::value) {
      if (j.kind != Json::Kind::kArray) throw Refused{"expected a list"};
      T out;
      for (const Json& e : j.items) out.push_back(Deref(Decode<typename T::value_type>(e)));
      return out;
    } else if constexpr (IsOptional<T>::value) {
      if (j.kind == Json::Kind::kNull) return T();
      return T(Deref(Decode<typename T::value_type>(j)));
    } else {
      auto name = names_.find(std::type_index(typeid(T)));
      if (name == names_.end()) throw Refused{"an argument of a type the shim does not know"};
      const std::string key = "$" + name->second;
      if (j.kind != Json::Kind::kObject || j.members.size() != 1 || j.members[0].second.kind != Json::Kind::kInt)
        throw Refused{"expected a handle {\"" + key + "\": N}"};
      const int64_t n = j.members[0].second.i;
      if (n < 0 || static_cast<size_t>(n) >= handles_.size()) throw Refused{"unknown handle " + std::to_string(n)};
      if (j.members[0].first != key || handles_[static_cast<size_t>(n)].first != name->second)
        throw Refused{"handle " + std::to_string(n) + " is a " + handles_[static_cast<size_t>(n)].first + ", not a " +
                      name->second};
      return std::static_pointer_cast<const T>(handles_[static_cast<size_t>(n)].second);
    }
  }

  template <typename T>
  Json Encode(T v) {
    if constexpr (std::is_same_v<T, bool>) {
      return Json::Bool(v);
    } else if constexpr (std::is_integral_v<T>) {
      static_assert(std::is_same_v<T, int64_t> || std::is_same_v<T, int>, "integers are int64_t or int");
      return Json::Int(static_cast<int64_t>(v));
    } else if constexpr (std::is_same_v<T, std::string>) {
      return Json::String(std::move(v));
    } else if constexpr (IsVector<T>::value) {
      Json j;
      j.kind = Json::Kind::kArray;
      for (auto&& e : v) j.items.push_back(Encode(typename T::value_type(e)));
      return j;
    } else if constexpr (IsOptional<T>::value) {
      return v ? Encode(*std::move(v)) : Json();
    } else {
      auto name = names_.find(std::type_index(typeid(T)));
      if (name == names_.end()) throw Refused{"a result of a type the shim does not know"};
      if (handles_.size() >= kMaxHandles)
        throw Refused{"more than " + std::to_string(kMaxHandles) + " handles (limit of the shim)"};
      handles_.emplace_back(name->second, std::make_shared<const T>(std::move(v)));
      return Json::Object({{"$" + name->second, Json::Int(static_cast<int64_t>(handles_.size() - 1))}});
    }
  }

  std::map<std::type_index, std::string> names_;
  std::map<std::string, std::function<Json(const std::vector<Json>&)>> ops_;
  std::mutex mu_;  // guards handles_ (and the library: one call at a time)
  std::vector<std::pair<std::string, std::shared_ptr<const void>>> handles_;
};

// The --arg K=V options Serve was given (a library's own switches, e.g.
// its mutant).
inline std::map<std::string, std::string>& Args() {
  static std::map<std::string, std::string> args;
  return args;
}

// Parses --port N and --arg K=V (into Args()); exits 2 on anything else.
inline int ParseArgsOrExit(int argc, char** argv) {
  int port = -1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--port" || a == "--arg") && i + 1 < argc) {
      const std::string v = argv[++i];
      if (a == "--port") {
        port = std::atoi(v.c_str());
      } else if (const size_t eq = v.find('='); eq != std::string::npos) {
        Args()[v.substr(0, eq)] = v.substr(eq + 1);
      } else {
        port = -2;
      }
    } else {
      port = -2;
    }
  }
  if (port <= 0 || port > 65535) {
    std::fprintf(stderr, "usage: %s --port N [--arg K=V]...\n", argv[0]);
    std::exit(2);
  }
  return port;
}

// Most connections served at once; more are closed at once.
inline constexpr int kMaxConnections = 256;

// Serves `lib` on 127.0.0.1:port, a thread per connection, until killed.
inline int Serve(int port, Library& lib) {
  std::signal(SIGPIPE, SIG_IGN);
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(fd, 64) != 0) {
    std::perror("dualswarm_shim: listen");
    return 1;
  }
  std::printf("listening on 127.0.0.1:%d\n", port);
  std::fflush(stdout);
  static std::atomic<int> connections_open{0};
  while (true) {
    const int c = accept(fd, nullptr, nullptr);
    if (c < 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));  // out of descriptors: let some close
      continue;
    }
    if (connections_open.load() >= kMaxConnections) {
      close(c);
      continue;
    }
    ++connections_open;
    auto serve = [c, &lib] {
      std::string in;
      char buf[65536];
      while (true) {
        const ssize_t n = read(c, buf, sizeof buf);
        if (n <= 0) break;
        in.append(buf, static_cast<size_t>(n));
        size_t nl;
        bool ok = true;
        while (ok && (nl = in.find('\n')) != std::string::npos) {
          std::string line = in.substr(0, nl);
          in.erase(0, nl + 1);
          if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
          std::string out;
          try {
            out = lib.Answer(line) + "\n";
          } catch (...) {  // out of memory writing the answer: the shim's failure, said so
            out = "{\"error\":\"the shim could not write the answer\"}\n";
          }
          ok = send(c, out.data(), out.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(out.size());
        }
        if (!ok) break;
        if (in.size() > kMaxLine) {
          const char* e = "{\"error\":\"request line too long\"}\n";
          send(c, e, std::strlen(e), MSG_NOSIGNAL);
          break;
        }
      }
      close(c);
      --connections_open;
    };
    try {
      std::thread(serve).detach();
    } catch (const std::system_error&) {  // no thread to be had: refuse this one
      close(c);
      --connections_open;
    }
  }
}

inline int Serve(int argc, char** argv, Library& lib) { return Serve(ParseArgsOrExit(argc, argv), lib); }

}  // namespace dualswarm_shim

#endif  // DUALSWARM_SHIMS_CPP_DUALSWARM_SHIM_H_
