// J-expressions: test inputs that survive reruns. A J-expression is a JSON
// value with holes; a hole refers to a value in an earlier message of the
// live trace and is written {"$ref": "LABEL.JPATH.FN"} (optionally with
// "$else": a fallback value), e.g. {"$ref": "4.@headers@etag.weaken"}:
// "the etag header of the message labelled 4, made weak".
//   JPATH: "this" or a sequence of "@field" / "#index" steps; in a field
//          '%', '@', '#' and '.' are written %25, %40, %23 and %2E.
//   FN:    id | weaken (add W/) | strip_weak (drop W/) | succ (int + 1).
// Holes are filled when the request is sent. Evaluation is loose: if the
// label is missing or lacks the path in this run, the most recent message
// that has the path is used instead; only if none has it is "$else" used.
// Data that merely looks like a hole (a map with a "$ref" or "$quote" key
// that a spec built, e.g. a JSON-schema reference in a request) travels
// quoted, {"$quote": VALUE}: taken literally, never filled.
#ifndef DUALSWARM_ENGINE_IR_JEXPR_H_
#define DUALSWARM_ENGINE_IR_JEXPR_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "engine/ir/value.h"

namespace dualswarm::ir {

struct JStep {
  bool is_index = false;
  std::string field;
  int64_t index = 0;
};
using JPath = std::vector<JStep>;

struct JRef {
  int64_t label = 0;
  JPath path;
  std::string fn = "id";
};

// "this" / "@a@b#0" <-> steps. Also accepts dotted paths ("headers.etag").
absl::StatusOr<JPath> ParseJPath(absl::string_view text);
std::string JPathToString(const JPath& p);
// Follows a path; nullptr when a step is missing.
const Value* FollowJPath(const Value& v, const JPath& p);
// Calls visit(leaf, path) for every string leaf of v, maps and lists walked
// in order; `path` is the path to v on entry (its steps to each leaf are
// pushed and popped as the walk goes).
void ForEachStringLeaf(const Value& v, JPath* path, const std::function<void(const std::string&, const JPath&)>& visit);

absl::StatusOr<JRef> ParseJRef(absl::string_view text);
std::string JRefToString(const JRef& r);

// A hole value: {"$ref": "..."} plus "$else" when `fallback` is given.
Value MakeHole(const JRef& ref, const Value* fallback);
// Whether v is a hole (a map with a string "$ref").
bool IsHole(const Value& v);
// Whether any hole occurs in v (outside quotes).
bool HasHoles(const Value& v);
// {"$quote": v}, and whether v is such a quote.
Value Quote(const Value& v);
bool IsQuoted(const Value& v);
// v with every map that looks like a hole or a quote quoted, except the
// real holes listed in `holes` (those a gen block's observed() made).
Value QuoteLookalikes(const Value& v, const std::vector<Value>& holes);

// One message of the live trace that holes may refer to.
struct LabeledMessage {
  int64_t label;
  Value msg;
};

// Applies a J-expression function; InvalidArgument for unknown names or a
// value of the wrong kind.
absl::StatusOr<Value> ApplyJFn(absl::string_view fn, const Value& v);

// Fills every hole against `trace` (oldest first). NotFound when a hole can
// be resolved neither strictly, loosely, nor by its "$else".
absl::StatusOr<Value> Instantiate(const Value& jexpr, const std::vector<LabeledMessage>& trace);

}  // namespace dualswarm::ir

#endif  // DUALSWARM_ENGINE_IR_JEXPR_H_
