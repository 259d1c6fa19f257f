// Abstract syntax of a .dspec spec. The parser builds it; the checker
// (checks.h) resolves names to slots and builtins in place; the interpreter
// walks it. Every node keeps the location of its first token.
#ifndef DUALSWARM_ENGINE_LANG_AST_H_
#define DUALSWARM_ENGINE_LANG_AST_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/ir/value.h"
#include "engine/lang/loc.h"

namespace dualswarm::lang {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

enum class ExprKind {
  kLiteral,  // literal (null, bool, int, string, none)
  kName,     // identifier reference (resolved to local slot or global index)
  kSome,     // some(e)
  kRecord,   // { key: e, ... }
  kList,     // [e, ...]
  kField,    // e.name
  kIndex,    // e[i]
  kUnwrap,   // e!
  kCall,     // name(args) or recv.name(args) (receiver is args[0])
  kUnary,    // op e  (op: "!" or "-")
  kBinary,   // e op e (== != < <= > >= + - * / %)
  kAnd,      // e && e  (short-circuit)
  kOr,       // e || e
  kIf,       // if c { } else ...   args: cond, then, else (else may be null)
  kMatch,    // match e { arms }
  kEither,   // either { } or { } ...  args: the alternatives
  kFresh,    // fresh int|string|bool
  kBlock,    // { stmts; value? }
  kAssume,   // assume e
  kAssert,   // assert e
  kSend,     // send conn msg
  kOneof,    // oneof { e, e, ... }          (gen only)
  kFreq,     // freq { w: e, ... }           (gen only)
};

enum class RefKind { kUnresolved, kLocal, kGlobal };

struct Pattern {
  enum class Kind { kWildcard, kBind, kLiteral, kNone, kSome, kRecord };
  Kind kind = Kind::kWildcard;
  Loc loc;
  ir::Value literal;              // kLiteral
  std::string name;               // kBind
  int slot = -1;                  // kBind, set by the checker
  std::vector<Pattern> subs;      // kSome: 1; kRecord: one per key
  std::vector<std::string> keys;  // kRecord
};

struct MatchArm {
  Pattern pattern;
  ExprPtr body;
};

struct Stmt {
  enum class Kind { kLet, kAssign, kExpr };
  Kind kind = Kind::kExpr;
  Loc loc;
  std::string name;  // kLet / kAssign target
  RefKind ref = RefKind::kUnresolved;
  int slot = -1;  // local slot or global index
  ExprPtr value;
};

enum class Builtin {
  kNone,
  // strings
  kLen,
  kStartsWith,
  kEndsWith,
  kContains,
  kSubstr,
  kStr,
  kToInt,
  kSplit,  // concrete only
  kTrim,   // concrete only
  // maps
  kHas,
  kGet,
  kSet,
  kRemove,
  kKeys,
  kValues,
  // lists
  kPush,
  kDrop,
  // options
  kIsSome,
  kIsNone,
  kOrElse,
  // the tester's connections (ConnectionNodes in interp.h)
  kNodeOf,
  kNodes,
  kOrigins,
  // `send origin(T) MSG`: the origin side, as the connection of a send only
  kOrigin,
  // gen-only (meaning given by the tester)
  kPick,
  kRandomWord,
  kRandomEtag,
  kRandomInt,
  kObserved,
  kIsConcrete,
};

struct Expr {
  ExprKind kind;
  Loc loc;
  ir::Value literal;                       // kLiteral
  std::string name;                        // kName / kField / kCall / kUnary / kBinary op
  std::vector<ExprPtr> args;               // children
  std::vector<std::string> keys;           // kRecord keys
  std::vector<int64_t> weights;            // kFreq
  std::vector<Stmt> stmts;                 // kBlock statements
  ExprPtr tail;                            // kBlock value expression (may be null)
  std::vector<MatchArm> arms;              // kMatch
  sym::Sort fresh_sort = sym::Sort::kInt;  // kFresh
  // Resolution (filled by the checker).
  RefKind ref = RefKind::kUnresolved;
  int slot = -1;      // kName: local slot or global index
  int fn_index = -1;  // kCall to a user function
  int op_index = -1;  // kCall to an op of the signature (in a law)
  Builtin builtin = Builtin::kNone;
  int site = -1;  // kOneof / kFreq: site number within the spec
  // kIf / kMatch / kEither / kOneof / kFreq: the id of its first branch
  // (branches.h); arm or alternative i is branch + i (kIf: then 0, else 1).
  int branch = -1;
};

struct TypeExpr {
  std::string name;  // "int", "string", "bool", "map", "list", "option", "record", ...
  std::vector<TypeExpr> params;
  std::vector<std::string> fields;  // record type field names (params parallel)
  Loc loc;
};

struct VarDecl {
  std::string name;
  Loc loc;
  bool has_type = false;
  TypeExpr type;
  ExprPtr init;
  int num_slots = 0;  // locals (`let`, match bindings) inside the initialiser
};

struct FnDecl {
  std::string name;
  Loc loc;
  std::vector<std::string> params;
  ExprPtr body;  // a kBlock
  int num_slots = 0;
};

// Which side of an intermediary a handler or generator serves: the clients
// (the default, and all a server has), or the origin servers the SUT
// forwards to (docs/spec-language.md: intermediaries).
enum class Role { kClient, kOrigin };
inline const char* RoleName(Role r) { return r == Role::kOrigin ? "origin" : "client"; }

// `on recv REQ from CONN { ... }` (client role), or `on recv ANSWER from
// TAG: origin { ... }`: the origin's answer to the request the spec sent
// with `send origin(TAG) ...`.
struct Handler {
  std::string request;  // name bound to the received message
  std::string conn;     // name bound to the connection (origin role: the tag)
  Role role = Role::kClient;
  Loc loc;
  ExprPtr body;
  int num_slots = 0;
};

// `on fault F { ... }`: what a fault event of the trace does to the server
// (the checker runs it as one atomic step at the event: docs/spec-language.md).
struct FaultHandler {
  std::string fault;  // name bound to the event's fields ({"fault": NAME, ...})
  Loc loc;
  ExprPtr body;
  int num_slots = 0;
};

// `gen NAME { ... }`: a client request; `gen NAME(REQ): origin { ... }`:
// the origin's answer to request REQ.
struct GenDecl {
  std::string name;
  Role role = Role::kClient;
  std::string param;  // origin role: the name bound to the request answered
  Loc loc;
  ExprPtr body;
  int num_slots = 0;
};

// `partition q => KEY;`: requests whose keys differ touch disjoint state.
struct PartitionDecl {
  std::string request;
  Loc loc;
  ExprPtr key;
  int num_slots = 0;
};

// A temporal formula of a `property` (docs/spec-language.md: properties):
// conditions `{ EXPR }` on one event of the trace, combined by boolean and
// temporal operators. engine/monitor steps it over a trace.
struct Formula {
  enum class Kind {
    kAtom,        // { EXPR }: `atom` holds at the event
    kNot,         // !F
    kAnd,         // F && G
    kOr,          // F || G
    kImplies,     // F => G
    kAlways,      // always F: at this event and every later one
    kNext,        // next F: at the next event
    kEventually,  // eventually within N F: at this event or one of the next N
    kUntil,       // F until G: G at some event, F at every one before it
  };
  Kind kind = Kind::kAtom;
  Loc loc;
  ExprPtr atom;                          // kAtom (a block)
  int64_t within = 0;                    // kEventually
  std::unique_ptr<Formula> left, right;  // operands (unary: left)
};

// `property NAME(REQ, RESP, CONN) = FORMULA;`: REQ, RESP and CONN name an
// event's request, its response (none when the event is the request being
// sent) and its connection; RESP and CONN may be left out.
struct PropertyDecl {
  std::string name;
  std::vector<std::string> params;
  Loc loc;
  std::unique_ptr<Formula> formula;
  int num_slots = 0;  // of the atoms (each evaluated with the params in slots 0..)
};

// A library interface's signature (docs/interfaces.md). `type NAME;`: an
// abstract type, whose values the tester only holds as handles the library
// gave it. `op NAME(T1, ...) -> T;`: an operation; each type names an
// abstract type, a `gen` block (the values of a base type the tester
// draws), or one of int, string, bool (drawn by default generators);
// without `-> T` it returns nothing the tester keeps.
struct AbstractTypeDecl {
  std::string name;
  Loc loc;
};
struct OpDecl {
  std::string name;
  Loc loc;
  std::vector<std::string> params;  // type names
  std::string result;               // "" when it returns nothing kept
};

// `property NAME(x: T, ...) when P { BODY }`: a law of a library interface,
// checked for values the tester built (docs/interfaces.md). P and BODY are
// deterministic expressions over the parameters (slots 0..) that may call
// the signature's ops (each call a call of the library); P false: the test
// is aborted; BODY false: the law is violated.
struct LawDecl {
  std::string name;
  Loc loc;
  std::vector<std::string> params;
  std::vector<std::string> param_types;
  ExprPtr when;  // may be null
  ExprPtr body;  // a kBlock
  int num_slots = 0;
};

struct SpecAst {
  std::string file;
  std::string name;
  std::vector<std::pair<std::string, Loc>> uses;
  std::vector<VarDecl> vars;
  std::vector<FnDecl> fns;
  std::vector<Handler> handlers;             // one client handler, at most one origin handler (checks.cc)
  std::vector<FaultHandler> fault_handlers;  // at most one (checks.cc)
  std::vector<GenDecl> gens;
  bool has_partition = false;
  PartitionDecl partition;
  std::vector<PropertyDecl> properties;
  std::vector<AbstractTypeDecl> types;
  std::vector<OpDecl> ops;
  std::vector<LawDecl> laws;
  int num_choice_sites = 0;  // oneof/freq sites numbered by the checker
};

}  // namespace dualswarm::lang

#endif  // DUALSWARM_ENGINE_LANG_AST_H_
