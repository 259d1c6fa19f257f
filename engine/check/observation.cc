#include "engine/check/observation.h"

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "engine/ir/json.h"

namespace dualswarm::check {
namespace {

absl::Status Bad(absl::string_view msg) { return absl::InvalidArgumentError(msg); }

absl::StatusOr<int64_t> IntField(const ir::Value& v, absl::string_view name, bool required, int64_t dflt) {
  const ir::Value* f = v.Find(name);
  if (f == nullptr) {
    if (required) return Bad(absl::StrCat("missing field \"", name, "\""));
    return dflt;
  }
  if (!f->is_int()) return Bad(absl::StrCat("field \"", name, "\" must be an integer"));
  return f->as_int();
}

// A fault event: "fault" names it (1-64 bytes); its other fields (which
// node, which links) are kept as they are, for diagrams and the nemesis.
absl::StatusOr<Observation> FaultFromValue(const ir::Value& v, Observation o) {
  const ir::Value* name = v.Find("fault");
  if (name == nullptr || !name->is_string() || name->as_string().empty() || name->as_string().size() > 64)
    return Bad("a fault event needs \"fault\": its name (a string of 1 to 64 bytes)");
  o.kind = Observation::Kind::kFault;
  o.msg = v.Remove("event").Remove("t");
  return o;
}

// "side": absent or "client" (the clients' side), or "origin".
absl::StatusOr<Side> SideField(const ir::Value& v) {
  const ir::Value* f = v.Find("side");
  if (f == nullptr) return Side::kClient;
  if (f->is_string() && f->as_string() == "client") return Side::kClient;
  if (f->is_string() && f->as_string() == "origin") return Side::kOrigin;
  return Bad("field \"side\" must be \"client\" or \"origin\"");
}

}  // namespace

const char* ObservationKindName(Observation::Kind k) {
  switch (k) {
    case Observation::Kind::kSent:
      return "sent";
    case Observation::Kind::kReceived:
      return "received";
    case Observation::Kind::kClosed:
      return "closed";
    case Observation::Kind::kTimeout:
      return "timeout";
    case Observation::Kind::kFault:
      return "fault";
  }
  return "?";
}

absl::StatusOr<Observation> ObservationFromValue(const ir::Value& v) {
  if (!v.is_map()) return Bad("an observation must be a JSON object");
  Observation o;
  auto t = IntField(v, "t", false, -1);
  if (!t.ok()) return t.status();
  // -1 means absent, and a negative time would not be written back.
  if (v.Find("t") != nullptr && *t < 0) return Bad("field \"t\" must not be negative");
  o.t = *t;
  absl::StatusOr<Side> side = SideField(v);
  if (!side.ok()) return side.status();
  o.side = *side;
  if (const ir::Value* ev = v.Find("event"); ev != nullptr && ev->is_string() && ev->as_string() == "fault") {
    if (v.Find("side") != nullptr) return Bad("a fault event has no side");
    return FaultFromValue(v, o);
  }
  auto conn = IntField(v, "conn", true, 0);
  if (!conn.ok()) return conn.status();
  if (*conn < 0 || *conn > 1'000'000) return Bad("field \"conn\" must be between 0 and 1000000");
  o.conn = *conn;
  if (const ir::Value* ev = v.Find("event")) {
    if (!ev->is_string()) return Bad("field \"event\" must be a string");
    if (ev->as_string() == "closed") {
      o.kind = Observation::Kind::kClosed;
      return o;
    }
    if (ev->as_string() != "timeout")
      return Bad(absl::StrCat("unknown event \"", ev->as_string(), "\" (expected closed, timeout or fault)"));
    if (o.side == Side::kOrigin) return Bad("a timeout is on the clients' side only (the tester waits there)");
    o.kind = Observation::Kind::kTimeout;
    auto label = IntField(v, "label", true, 0);
    if (!label.ok()) return label.status();
    o.label = *label;
    return o;
  }
  const ir::Value* dir = v.Find("dir");
  if (dir == nullptr) return Bad("missing field \"dir\" (or \"event\")");
  if (!dir->is_string() || (dir->as_string() != "sent" && dir->as_string() != "received"))
    return Bad("field \"dir\" must be \"sent\" or \"received\"");
  o.kind = dir->as_string() == "sent" ? Observation::Kind::kSent : Observation::Kind::kReceived;
  auto label = IntField(v, "label", true, 0);
  if (!label.ok()) return label.status();
  o.label = *label;
  if (o.label <= 0 || o.label >= kLabelLimit) return Bad("field \"label\" must be positive and below 2^62");
  // A request has an odd label, its answer the next one: the tester sends
  // the requests on the clients' side and receives them on the origin's.
  const bool request = (o.kind == Observation::Kind::kSent) == (o.side == Side::kClient);
  if (request && o.label % 2 == 0)
    return Bad(absl::StrCat(o.side == Side::kClient ? "a sent request" : "a request received on the origin side",
                            " must have an odd label, got ", o.label));
  if (!request && o.label % 2 != 0)
    return Bad(absl::StrCat(o.side == Side::kClient ? "a received response" : "an answer sent on the origin side",
                            " must have an even label, got ", o.label));
  const ir::Value* msg = v.Find("msg");
  if (msg == nullptr) return Bad("missing field \"msg\"");
  o.msg = *msg;
  return o;
}

absl::StatusOr<Observation> ParseObservationLine(absl::string_view line) {
  auto v = ir::ParseJson(line);
  if (!v.ok()) return v.status();
  auto o = ObservationFromValue(*v);
  if (!o.ok()) return Bad(absl::StrCat("1:1: ", o.status().message()));
  return o;
}

absl::StatusOr<std::vector<Observation>> ParseTrace(absl::string_view file, absl::string_view text) {
  std::vector<Observation> out;
  int lineno = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++lineno;
    size_t first = line.find_first_not_of(" \t\r");
    if (first == absl::string_view::npos || line[first] == '#') continue;
    auto o = ParseObservationLine(line);
    if (!o.ok())
      return Bad(absl::StrCat(file, ":", lineno, ":", o.status().message().substr(o.status().message().find(':') + 1)));
    o->line = lineno;
    out.push_back(std::move(*o));
  }
  return out;
}

std::string ObservationToJson(const Observation& o) {
  std::string out;
  const char* side = o.side == Side::kOrigin ? ",\"side\":\"origin\"" : "";  // a client line as before
  switch (o.kind) {
    case Observation::Kind::kClosed:
      absl::StrAppend(&out, "{\"event\":\"closed\"", side, ",\"conn\":", o.conn);
      break;
    case Observation::Kind::kTimeout:
      absl::StrAppend(&out, "{\"event\":\"timeout\",\"label\":", o.label, ",\"conn\":", o.conn);
      break;
    case Observation::Kind::kFault: {
      // {"event":"fault", then the fault's own fields.
      std::string fields = ir::ToJson(o.msg.is_map() ? o.msg : ir::Value::Map({}));
      absl::StrAppend(&out, "{\"event\":\"fault\"", fields.size() > 2 ? "," : "", fields.substr(1, fields.size() - 2));
      break;
    }
    default:
      absl::StrAppend(&out, "{", o.side == Side::kOrigin ? "\"side\":\"origin\"," : "", "\"label\":", o.label,
                      ",\"conn\":", o.conn, ",\"dir\":\"", ObservationKindName(o.kind),
                      "\",\"msg\":", ir::ToJson(o.msg));
  }
  if (o.t >= 0) absl::StrAppend(&out, ",\"t\":", o.t);
  out += "}";
  return out;
}

}  // namespace dualswarm::check
