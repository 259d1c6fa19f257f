// Unit tests for engine/lang: the lexer, the parser and load-time checks
// (every malformed spec is refused with InvalidArgument and the exact
// "file:line:col" of the problem), and the interpreter (one handler step
// driven by a scripted Oracle; spec bugs at run time are FailedPrecondition
// with file:line:col).
#include <cstdint>
#include <deque>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "engine/ir/json.h"
#include "engine/ir/value.h"
#include "engine/lang/checks.h"
#include "engine/lang/interp.h"
#include "engine/lang/lexer.h"
#include "engine/lang/parser.h"
#include "engine/lang/spec.h"
#include "engine/sym/term.h"
#include "gtest/gtest.h"
#include "tests/common/fixed_gen.h"

namespace dualswarm::lang {
namespace {

using ir::Value;

// Joins lines with '\n' so that line:column positions are easy to read off.
std::string Src(std::initializer_list<const char*> lines) { return absl::StrJoin(lines, "\n"); }

std::shared_ptr<const Spec> MustLoad(const std::string& src, const std::string& file = "t.dspec") {
  auto spec = LoadSpec(file, src);
  EXPECT_TRUE(spec.ok()) << spec.status() << "\n--- source ---\n" << src;
  return spec.ok() ? *spec : nullptr;
}

// Loads `src` as t.dspec, expects InvalidArgument, returns the message.
std::string LoadError(const std::string& src) {
  auto spec = LoadSpec("t.dspec", src);
  EXPECT_FALSE(spec.ok()) << "spec unexpectedly loaded:\n" << src;
  if (spec.ok()) return "";
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument) << spec.status();
  return std::string(spec.status().message());
}

// Expects exactly one error line, at `loc` ("line:col"), containing `what`.
void ExpectOneError(const std::string& src, const std::string& loc, const std::string& what) {
  std::string msg = LoadError(src);
  std::vector<std::string> lines = absl::StrSplit(msg, '\n');
  ASSERT_EQ(lines.size(), 1u) << msg;
  EXPECT_TRUE(absl::StartsWith(msg, absl::StrCat("t.dspec:", loc, ": "))) << "want at " << loc << ", got: " << msg;
  EXPECT_TRUE(absl::StrContains(msg, what)) << "want '" << what << "', got: " << msg;
}

// A minimal valid handler, appended to specs that test something else.
constexpr const char* kHandler = "on recv q from c { send c {}; }";

// ------------------------------------------------------------------ lexer

TEST(LexerTest, TokensCarryLineAndColumn) {
  auto toks = Lex("f", "spec x;\n  let s = \"a\\n\\\"b\" => 42 // c\n/* multi\nline */ _y");
  ASSERT_TRUE(toks.ok()) << toks.status();
  const auto& t = *toks;
  ASSERT_EQ(t.size(), 11u);
  EXPECT_EQ(t[0].kind, Tok::kIdent);
  EXPECT_EQ(t[0].text, "spec");
  EXPECT_EQ(t[0].loc.line, 1);
  EXPECT_EQ(t[0].loc.col, 1);
  EXPECT_EQ(t[2].kind, Tok::kPunct);
  EXPECT_EQ(t[2].text, ";");
  EXPECT_EQ(t[2].loc.col, 7);
  EXPECT_EQ(t[3].text, "let");
  EXPECT_EQ(t[3].loc.line, 2);
  EXPECT_EQ(t[3].loc.col, 3);
  EXPECT_EQ(t[6].kind, Tok::kString);
  EXPECT_EQ(t[6].text, "a\n\"b");
  EXPECT_EQ(t[6].loc.col, 11);
  EXPECT_EQ(t[7].text, "=>");
  EXPECT_EQ(t[7].loc.col, 20);
  EXPECT_EQ(t[8].kind, Tok::kInt);
  EXPECT_EQ(t[8].ival, 42);
  EXPECT_EQ(t[9].kind, Tok::kIdent);
  EXPECT_EQ(t[9].text, "_y");
  EXPECT_EQ(t[9].loc.line, 4);
  EXPECT_EQ(t[9].loc.col, 9);
  EXPECT_EQ(t[10].kind, Tok::kEof);
}

TEST(LexerTest, TwoCharacterOperatorsWin) {
  auto toks = Lex("f", "a<=b==c!=d&&e||f>=g");
  ASSERT_TRUE(toks.ok());
  std::vector<std::string> puncts;
  for (const auto& t : *toks)
    if (t.kind == Tok::kPunct) puncts.push_back(t.text);
  EXPECT_EQ(puncts, (std::vector<std::string>{"<=", "==", "!=", "&&", "||", ">="}));
}

TEST(LexerTest, Errors) {
  struct Case {
    const char* src;
    const char* want;
  };
  const Case cases[] = {
      {"spec x;\n  \"abc", "f:2:3: unterminated string literal"},
      {"x = \"ab\ncd\"", "f:1:5: unterminated string literal"},
      {"x = \"a\\qb\"", "f:1:7: unknown escape '\\q'"},
      {"x\n  /* never closed", "f:2:3: unterminated /* comment"},
      {"x = 99999999999999999999", "f:1:5: integer literal out of 64-bit range"},
      {"x = 9223372036854775807", ""},
      {"x = 12abc", "f:1:5: malformed number"},
      {"x = 1\n\n   @", "f:3:4: unexpected character '@'"},
      {"x = $", "f:1:5: unexpected character '$'"},
  };
  for (const auto& c : cases) {
    auto toks = Lex("f", c.src);
    if (*c.want == '\0') {
      EXPECT_TRUE(toks.ok()) << c.src << ": " << toks.status();
      continue;
    }
    ASSERT_FALSE(toks.ok()) << c.src;
    EXPECT_EQ(toks.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StartsWith(toks.status().message(), c.want))
        << "source: " << c.src << "\nwant: " << c.want << "\ngot: " << toks.status().message();
  }
}

// ------------------------------------------------------------ valid specs

TEST(LoadSpecTest, SmallSpecLoads) {
  std::string src = Src({
      "// a counter",
      "spec counter;",
      "use json;",
      "var n: int = 0;",
      "var names: list<string> = [\"a\", \"b\"];",
      "var m: map<string, {v: int, tag: option<string>}> = {k: {v: 1, tag: none}};",
      "fn twice(x) { x * 2 }",
      "on recv q from c {",
      "  n = n + twice(1);",
      "  send c { n: n, first: names[0] };",
      "}",
      "gen request {",
      "  oneof { { op: \"inc\" }, { op: pick([\"a\"]) } }",
      "}",
  });
  auto spec = MustLoad(src, "counter.dspec");
  ASSERT_NE(spec, nullptr);
  EXPECT_EQ(spec->name, "counter");
  EXPECT_EQ(spec->file, "counter.dspec");
  EXPECT_EQ(spec->schema, "json");
  EXPECT_EQ(spec->source, src);
  EXPECT_EQ(spec->global_names, (std::vector<std::string>{"n", "names", "m"}));
  ASSERT_EQ(spec->initial_globals.size(), 3u);
  EXPECT_EQ(spec->initial_globals[0], Value::Int(0));
  EXPECT_EQ(spec->initial_globals[1], Value::List({Value::String("a"), Value::String("b")}));
  EXPECT_EQ(ir::ToJson(spec->initial_globals[2]), R"({"k":{"tag":null,"v":1}})");
  EXPECT_EQ(spec->ast.fns.size(), 1u);
  EXPECT_EQ(spec->ast.gens.size(), 1u);
  EXPECT_EQ(spec->ast.num_choice_sites, 1);
  EXPECT_EQ(spec->content_hash, StableHashHex(src));
  EXPECT_EQ(spec->content_hash.size(), 16u);
}

TEST(LoadSpecTest, StableHashIsFnv1a64) {
  EXPECT_EQ(StableHashHex(""), "cbf29ce484222325");
  EXPECT_EQ(StableHashHex("a"), "af63dc4c8601ec8c");
  EXPECT_NE(StableHashHex("spec a;"), StableHashHex("spec b;"));
}

TEST(LoadSpecTest, ShippedSpecsLoad) {
  for (const char* name : {"kv.dspec", "http_webdav.dspec"}) {
    std::string path = absl::StrCat(DUALSWARM_SOURCE_DIR, "/specs/", name);
    auto spec = LoadSpecFile(path);
    ASSERT_TRUE(spec.ok()) << path << ": " << spec.status();
    EXPECT_EQ((*spec)->file, path);
    EXPECT_FALSE((*spec)->ast.handlers.empty());
  }
}

TEST(LoadSpecTest, MissingFileIsNotFound) {
  auto spec = LoadSpecFile("/nonexistent/dir/x.dspec");
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(spec.status().message(), "/nonexistent/dir/x.dspec"));
}

TEST(LoadSpecTest, InitialValuesMayUseLocalsAndMatch) {
  auto spec = MustLoad(Src({
      "spec t;",
      "var a = { let x = 20; let y = x + 1; x + y };",
      "var b = match some(3) { some(n) => n * 2, none => 0 };",
      "var c = if a > 40 { \"big\" } else { \"small\" };",
      "var d = { let s = \"ab\"; let t = s + s; { s: s, t: t } };",
      kHandler,
  }));
  ASSERT_NE(spec, nullptr);
  EXPECT_EQ(spec->initial_globals[0], Value::Int(41));
  EXPECT_EQ(spec->initial_globals[1], Value::Int(6));
  EXPECT_EQ(spec->initial_globals[2], Value::String("big"));
  EXPECT_EQ(ir::ToJson(spec->initial_globals[3]), R"({"s":"ab","t":"abab"})");
}

TEST(LoadSpecTest, CommentsAndBlockLikeStatementsNeedNoSemicolon) {
  MustLoad(Src({
      "spec t; /* block",
      "comment */",
      "var n = 0;",
      "on recv q from c {",
      "  if n == 0 { n = 1; } else { n = 2; }",
      "  match n { 1 => { n = 3; } _ => { n = 4; } }",
      "  either { n = 5; } or { n = 6; } or { n = 7; }",
      "  send c { n: n };",
      "}",
  }));
}

// --------------------------------------------------------- malformed specs

TEST(LoadSpecErrorTest, UnknownName) {
  ExpectOneError(Src({"spec t;", "on recv q from c {", "  send c { v: nope };", "}"}), "3:15", "unknown name 'nope'");
}

TEST(LoadSpecErrorTest, UnknownFunction) {
  ExpectOneError(Src({"spec t;", "on recv q from c {", "  send c { v: frob(1) };", "}"}), "3:15",
                 "unknown function 'frob'");
}

TEST(LoadSpecErrorTest, FunctionUsedAsValue) {
  ExpectOneError(Src({"spec t;", "fn f() { 1 }", "on recv q from c {", "  send c { v: f };", "}"}), "4:15",
                 "'f' is a function; call it with (...)");
}

TEST(LoadSpecErrorTest, WrongArityBuiltin) {
  ExpectOneError(Src({"spec t;", "on recv q from c {", "  let n = len(\"a\", \"b\");", "  send c {};", "}"}), "3:11",
                 "'len' takes 1 argument(s), got 2");
  ExpectOneError(Src({"spec t;", "on recv q from c {", "  let n = substr(\"a\");", "  send c {};", "}"}), "3:11",
                 "'substr' takes 2 to 3 arguments, got 1");
}

TEST(LoadSpecErrorTest, WrongArityMethodCallCountsReceiver) {
  // q.get() is get(q): one argument where two are needed.
  ExpectOneError(Src({"spec t;", "on recv q from c {", "  let x = q.get();", "  send c {};", "}"}), "3:12",
                 "'get' takes 2 argument(s), got 1");
}

TEST(LoadSpecErrorTest, WrongArityUserFunction) {
  ExpectOneError(Src({"spec t;", "fn f(a, b) { a + b }", "on recv q from c {", "  send c { v: f(1) };", "}"}), "4:15",
                 "'f' takes 2 argument(s), got 1");
}

TEST(LoadSpecErrorTest, OneofOutsideGen) {
  ExpectOneError(Src({"spec t;", "on recv q from c {", "  send c { v: oneof { 1, 2 } };", "}"}), "3:15",
                 "`oneof` is only allowed in `gen` blocks");
}

TEST(LoadSpecErrorTest, FreqOutsideGen) {
  ExpectOneError(Src({"spec t;", "fn f() {", "    freq { 1: \"a\", 2: \"b\" }", "}", kHandler}), "3:5",
                 "`freq` is only allowed in `gen` blocks");
}

TEST(LoadSpecErrorTest, FreqWeightMustBePositive) {
  ExpectOneError(Src({"spec t;", kHandler, "gen g {", "  freq { 0: 1, 2: 2 }", "}"}), "4:3",
                 "`freq` weights must be positive");
}

TEST(LoadSpecErrorTest, SendInGen) {
  ExpectOneError(Src({"spec t;", kHandler, "gen g {", "  send 0 {}", "}"}), "4:3",
                 "`send` is only allowed in the server");
}

TEST(LoadSpecErrorTest, SendInInitialValue) {
  ExpectOneError(Src({"spec t;", "var x = send 0 {};", kHandler}), "2:9", "`send` is only allowed in the server");
}

TEST(LoadSpecErrorTest, GenOnlyBuiltinInHandler) {
  ExpectOneError(Src({"spec t;", "on recv q from c {", "  send c { v: random_word(3) };", "}"}), "3:15",
                 "'random_word' is a tester function, only allowed in `gen` blocks");
  ExpectOneError(Src({"spec t;", "on recv q from c {", "  send c { v: observed(\"x\") };", "}"}), "3:15",
                 "'observed' is a tester function");
}

TEST(LoadSpecErrorTest, GenOnlyBuiltinInFunctionCalledByTheServer) {
  // A helper using tester builtins is fine for `gen`; the server may not call it.
  ExpectOneError(Src({"spec t;", "fn f() { pick([1]) }", "fn g() { f() }", "on recv q from c { send c { v: g() }; }"}),
                 "4:32", "'g' uses tester functions");
}

TEST(LoadSpecTest, GenOnlyBuiltinInFunctionUsedByGenLoads) {
  auto spec = LoadSpec("t.dspec", Src({"spec t;", "fn f() { pick([1]) }", kHandler, "gen r { f() }"}));
  EXPECT_TRUE(spec.ok()) << spec.status();
}

TEST(LoadSpecErrorTest, GenCannotAssignGlobals) {
  ExpectOneError(Src({"spec t;", "var n = 0;", kHandler, "gen g {", "  n = 1;", "  {}", "}"}), "5:3",
                 "`gen` blocks read the model state but cannot assign 'n'");
}

TEST(LoadSpecErrorTest, UnterminatedString) {
  ExpectOneError(Src({"spec t;", "on recv q from c {", "  send c { v: \"abc };", "}"}), "3:15",
                 "unterminated string literal");
}

TEST(LoadSpecErrorTest, UnknownEscapeInString) {
  ExpectOneError(Src({"spec t;", "var s = \"x\\y\";", kHandler}), "2:11", "unknown escape '\\y'");
}

TEST(LoadSpecErrorTest, MissingSemicolonAfterLet) {
  ExpectOneError(Src({"spec t;", "on recv q from c {", "  let x = 1", "  send c { v: x };", "}"}), "4:3",
                 "expected ';', found 'send'");
}

TEST(LoadSpecErrorTest, MissingSemicolonAfterExpression) {
  ExpectOneError(Src({"spec t;", "on recv q from c {", "  send c {}", "  send c {};", "}"}), "4:3",
                 "expected ';' after expression, found 'send'");
}

TEST(LoadSpecErrorTest, MissingSemicolonAfterVar) {
  ExpectOneError(Src({"spec t;", "var a = 1", "var b = 2;", kHandler}), "3:1", "expected ';', found 'var'");
}

TEST(LoadSpecErrorTest, MissingSemicolonAfterSpecName) {
  ExpectOneError(Src({"spec t", kHandler}), "2:1", "expected ';', found 'on'");
}

TEST(LoadSpecErrorTest, MissingSpecHeader) {
  ExpectOneError(Src({"", "  var x = 1;", kHandler}), "2:3", "a spec starts with `spec NAME;`");
}

TEST(LoadSpecErrorTest, MissingClosingBrace) {
  ExpectOneError(Src({"spec t;", "on recv q from c {", "  send c {};"}), "3:13", "unexpected end of file: missing '}'");
}

TEST(LoadSpecErrorTest, UnexpectedTopLevelItem) {
  ExpectOneError(Src({"spec t;", kHandler, "  let x = 1;"}), "3:3", "found 'let'");
}

TEST(LoadSpecErrorTest, UnknownType) {
  ExpectOneError(Src({"spec t;", "var x: strnig = \"a\";", kHandler}), "2:8", "unknown type 'strnig'");
  ExpectOneError(Src({"spec t;", "var x: map<string, intt> = {};", kHandler}), "2:20", "unknown type 'intt'");
}

TEST(LoadSpecErrorTest, TypeArity) {
  ExpectOneError(Src({"spec t;", "var x: list<int, int> = [];", kHandler}), "2:8", "type 'list' takes 1 parameter(s)");
  ExpectOneError(Src({"spec t;", "var x: map<int, int> = {};", kHandler}), "2:12", "map keys must be strings");
}

TEST(LoadSpecErrorTest, InitialValueDoesNotMatchType) {
  ExpectOneError(Src({"spec t;", "var n: int = \"five\";", kHandler}), "2:5",
                 "initial value of 'n' does not match its type: expected int, got string");
  ExpectOneError(Src({"spec t;", "var ok = 1;", "var m: map<string, int> = {a: 1, b: \"x\"};", kHandler}), "3:5",
                 "initial value of 'm' does not match its type: expected int, got string");
  ExpectOneError(Src({"spec t;", "var r: {a: int, b: string} = {a: 1};", kHandler}), "2:5",
                 "initial value of 'r' does not match its type: missing field 'b'");
  ExpectOneError(Src({"spec t;", "var l: list<bool> = [true, 1];", kHandler}), "2:5", "expected bool, got int");
  ExpectOneError(Src({"spec t;", "var o: option<string> = some(1);", kHandler}), "2:5", "expected string, got int");
  ExpectOneError(Src({"spec t;", "var o: option<string> = \"x\";", kHandler}), "2:5", "expected option, got string");
}

TEST(LoadSpecErrorTest, InitialValuesMatchingTheirTypesLoad) {
  MustLoad(Src({"spec t;", "var a: any = [1, \"x\"];", "var o: option<int> = none;", "var p: option<int> = some(2);",
                "var z: null = null;", "var b: bool = false;", "var r: {a: int} = {a: 1, extra: 2};", kHandler}));
}

TEST(LoadSpecErrorTest, TwoHandlers) {
  ExpectOneError(Src({"spec t;", kHandler, "", "  on recv r from d { send d {}; }"}), "4:3",
                 "a spec has one `on recv` handler per role (this is a second client handler)");
}

TEST(LoadSpecErrorTest, OneFaultHandlerAtMost) {
  MustLoad(Src({"spec t;", "var down = false;", kHandler, "on fault f {", "  down = f.fault == \"kill\";", "}"}));
  ExpectOneError(Src({"spec t;", kHandler, "on fault f { }", "on fault g { }"}), "4:1",
                 "a spec has at most one `on fault` handler");
  ExpectOneError(Src({"spec t;", kHandler, "on fault { }"}), "3:10", "expected the fault's name");
  ExpectOneError(Src({"spec t;", kHandler, "on fault f { g = 1; }"}), "3:14", "unknown name 'g'");
}

// An intermediary's spec: a client handler that forwards to the origin
// side with a tag, an origin handler that gets the answer back with the tag,
// a client gen and an origin gen (docs/spec-language.md: intermediaries).
constexpr const char* kRelay[] = {
    "spec relay;",
    "var seen = 0;",
    "on recv q from c {",
    "  seen = seen + 1;",
    "  send origin({c: c, n: seen}) { op: q.op, id: q.id };",
    "}",
    "on recv r from t: origin {",
    "  send t.c { v: r.v, n: t.n };",
    "}",
    "gen request { { op: \"get\", id: random_word(3) } }",
    "gen answer(q): origin { { v: q.id } }",
};

std::string Relay(std::initializer_list<const char*> more = {}) {
  std::vector<std::string> lines(std::begin(kRelay), std::end(kRelay));
  lines.insert(lines.end(), more.begin(), more.end());
  return absl::StrJoin(lines, "\n");
}

TEST(LoadSpecErrorTest, RolesOfHandlersAndGenerators) {
  MustLoad(Relay());
  MustLoad(Relay({"on fault f { }"}));
  ExpectOneError(Relay({"on recv x from y: origin { }"}), "12:1",
                 "one `on recv` handler per role (this is a second origin handler)");
  ExpectOneError(Relay({"on recv x from y: client { }"}), "12:1",
                 "one `on recv` handler per role (this is a second client handler)");
  ExpectOneError(Src({"spec t;", "on recv q from c: server { }"}), "2:19",
                 "expected a role, `client` or `origin`, found 'server'");
  ExpectOneError(Src({"spec t;", "on recv r from t: origin { }"}), "1:1", "the spec has no `on recv");
  ExpectOneError(Relay({"gen other: origin { {} }"}), "12:5",
                 "an origin generator answers a request: `gen other(REQ): origin");
  ExpectOneError(Relay({"gen other(q) { {} }"}), "12:5", "only an origin generator takes the request it answers");
  ExpectOneError(Relay({"gen other(q): origin { { v: seen2 } }"}), "12:29", "unknown name 'seen2'");
  ExpectOneError(Relay({"fn f(c) { origin(c) }"}), "12:11", "`origin(T)` names the origin side only as the connection");
  ExpectOneError(Relay({"partition q => q.id;"}), "12:1", "`partition` is not supported yet in a spec with an origin");
  ExpectOneError(Src({"spec t;", "on recv q from c { send origin(c) q; }", "gen r { {} }"}), "2:25",
                 "`send origin(...)` needs a handler for the origin's answers");
  ExpectOneError(Src({"spec t;", "on recv q from c { send origin(c, 1) q; }", "on recv r from t: origin { }"}), "2:25",
                 "`origin` takes the tag of the request");
}

TEST(LoadSpecErrorTest, NoHandler) {
  ExpectOneError(Src({"spec t;", "var x = 1;"}), "1:1", "the spec has no `on recv REQ from CONN { ... }` handler");
}

TEST(LoadSpecErrorTest, AssignmentToUnknownName) {
  ExpectOneError(Src({"spec t;", "on recv q from c {", "  y = 1;", "  send c {};", "}"}), "3:3",
                 "assignment to unknown name 'y'");
}

TEST(LoadSpecErrorTest, LetIsScopedToItsBlock) {
  ExpectOneError(Src({"spec t;", "on recv q from c {", "  if true { let z = 1; }", "  send c { z: z };", "}"}), "4:15",
                 "unknown name 'z'");
}

TEST(LoadSpecErrorTest, InitialValueCannotReadLaterVar) {
  ExpectOneError(Src({"spec t;", "var a = b;", "var b = 1;", kHandler}), "2:9", "unknown name 'b'");
}

TEST(LoadSpecErrorTest, InitialValueMustBeDeterministic) {
  ExpectOneError(Src({"spec t;", "var a = fresh int;", kHandler}), "2:9", "must be deterministic");
  ExpectOneError(Src({"spec t;", "var a = either { 1 } or { 2 };", kHandler}), "2:9", "must be deterministic");
  ExpectOneError(Src({"spec t;", "fn f() { 1 }", "var a = f();", kHandler}), "3:9", "cannot call user functions");
}

TEST(LoadSpecErrorTest, InitialValueRuntimeErrors) {
  ExpectOneError(Src({"spec t;", "var a = 1 / 0;", kHandler}), "2:11", "division by zero");
  ExpectOneError(Src({"spec t;", "var a = none!;", kHandler}), "2:13", "unwrapped `none`");
  ExpectOneError(Src({"spec t;", "var a = assert 1 == 2;", kHandler}), "2:9", "assertion failed");
  ExpectOneError(Src({"spec t;", "var a = assume false;", kHandler}), "2:5", "may not `assume`");
}

TEST(LoadSpecErrorTest, UnknownSchema) {
  ExpectOneError(Src({"spec t;", "use xml;", kHandler}), "2:5", "unknown schema 'xml'");
  ExpectOneError(Src({"spec t;", "use http;", "use json;", kHandler}), "3:5", "a spec uses at most one schema");
}

TEST(LoadSpecErrorTest, Duplicates) {
  ExpectOneError(Src({"spec t;", "fn f() { 1 }", "fn f() { 2 }", kHandler}), "3:4", "function 'f' is defined twice");
  ExpectOneError(Src({"spec t;", "fn len(s) { 1 }", kHandler}), "2:4", "function 'len' shadows a builtin");
  ExpectOneError(Src({"spec t;", "var v = 1;", "var v = 2;", kHandler}), "3:5", "variable 'v' is declared twice");
  ExpectOneError(Src({"spec t;", "fn f(a, a) { a }", kHandler}), "2:4", "parameter 'a' appears twice");
  ExpectOneError(Src({"spec t;", kHandler, "gen g { 1 }", "gen g { 2 }"}), "4:5", "generator 'g' is defined twice");
  ExpectOneError(Src({"spec t;", "var r = {a: 1, a: 2};", kHandler}), "2:16", "duplicate field 'a' in record");
}

TEST(LoadSpecErrorTest, SyntaxShapes) {
  ExpectOneError(Src({"spec t;", "var x = either { 1 };", kHandler}), "2:21", "needs at least one `or");
  ExpectOneError(Src({"spec t;", "var x = match 1 { };", kHandler}), "2:9", "a `match` needs at least one arm");
  ExpectOneError(Src({"spec t;", "var x = oneof { };", kHandler}), "2:9", "`oneof` needs at least one alternative");
  ExpectOneError(Src({"spec t;", "var x = fresh float;", kHandler}), "2:15",
                 "expected `int`, `string` or `bool` after `fresh`");
  ExpectOneError(Src({"spec t;", "var x = 1 +;", kHandler}), "2:12", "expected an expression, found ';'");
  ExpectOneError(Src({"spec t;", "var x;", kHandler}), "2:6", "a `var` needs an initial value");
  ExpectOneError(Src({"spec t;", "on send q from c { }"}), "2:4", "expected `recv` or `fault` after `on`");
  ExpectOneError(Src({"spec t;", "var if = 1;", kHandler}), "2:5", "expected a variable name, found 'if'");
}

TEST(LoadSpecErrorTest, MultipleSyntaxErrorsAreAllReported) {
  std::string msg = LoadError(Src({
      "spec t;",
      "var a = ;",  // line 2
      "var b = 1;",
      "fn f( { }",  // line 4
      "var c = 2;",
      "var d = ) ;",  // line 6
      kHandler,
  }));
  std::vector<std::string> lines = absl::StrSplit(msg, '\n');
  ASSERT_EQ(lines.size(), 3u) << msg;
  EXPECT_TRUE(absl::StartsWith(lines[0], "t.dspec:2:9: ")) << lines[0];
  EXPECT_TRUE(absl::StartsWith(lines[1], "t.dspec:4:7: ")) << lines[1];
  EXPECT_TRUE(absl::StartsWith(lines[2], "t.dspec:6:9: ")) << lines[2];
}

TEST(LoadSpecErrorTest, MultipleCheckErrorsAreAllReported) {
  std::string msg = LoadError(Src({
      "spec t;",
      "var x: strnig = \"a\";",  // 2:8 unknown type
      "on recv q from c {",
      "  let a = nope;",                    // 4:11 unknown name
      "  let b = len(1, 2);",               // 5:11 arity
      "  y = 3;",                           // 6:3 unknown assignment target
      "  send c { v: random_int(1, 2) };",  // 7:15 gen-only
      "}",
      "on recv r from d { send d {}; }",  // 9:1 second handler
      "gen g { send 0 {} }",              // 10:9 send in gen
  }));
  std::vector<std::string> lines = absl::StrSplit(msg, '\n');
  EXPECT_EQ(lines.size(), 7u) << msg;
  for (const char* want :
       {"t.dspec:2:8: unknown type 'strnig'", "t.dspec:4:11: unknown name 'nope'", "t.dspec:5:11: 'len' takes 1",
        "t.dspec:6:3: assignment to unknown name 'y'", "t.dspec:7:15: 'random_int' is a tester function",
        "t.dspec:9:1: a spec has one `on recv` handler per role", "t.dspec:10:9: `send` is only allowed"}) {
    EXPECT_TRUE(absl::StrContains(msg, want)) << "missing: " << want << "\nin:\n" << msg;
  }
}

TEST(LoadSpecErrorTest, DeepNestingIsAnErrorNotACrash) {
  auto nested = [](const std::string& open, const std::string& inner, const std::string& close, int n) {
    std::string s;
    for (int i = 0; i < n; ++i) s += open;
    s += inner;
    for (int i = 0; i < n; ++i) s += close;
    return s;
  };
  const std::vector<std::string> exprs = {
      nested("(", "1", ")", 100000),
      nested("!", "true", "", 100000),
      nested("[", "1", "]", 100000),
      nested("some(", "1", ")", 100000),
      nested("{ ", "1", " }", 100000),
      "1" + nested(" + 1", "", "", 100000),
      "true" + nested(" && true", "", "", 100000),
      "{a: 1}" + nested(".a", "", "", 100000),
  };
  for (const auto& e : exprs) {
    std::string msg = LoadError(absl::StrCat("spec t;\nvar x = ", e, ";\n", kHandler));
    EXPECT_TRUE(absl::StrContains(msg, "nested more than")) << msg.substr(0, 200);
    EXPECT_TRUE(absl::StartsWith(msg, "t.dspec:2:")) << msg.substr(0, 200);
  }
  std::string type =
      LoadError(absl::StrCat("spec t;\nvar x: ", nested("list<", "int", ">", 50000), " = [];\n", kHandler));
  EXPECT_TRUE(absl::StrContains(type, "nested more than")) << type.substr(0, 200);
  // Realistic nesting is fine.
  MustLoad(absl::StrCat("spec t;\nvar x = ", nested("(", "1", ")", 200), " + ", "1" + nested(" + 1", "", "", 200),
                        ";\n", kHandler));
}

// ------------------------------------------------------------- interpreter

// An Oracle that follows a script and records what it was asked.
class ScriptOracle : public Oracle {
 public:
  std::deque<int> choices;     // answers for Choose (default 0)
  std::deque<bool> decisions;  // answers for Decide (default true)
  bool assume_answer = true;
  bool possible_answer = false;
  int64_t next_id = 1;

  std::vector<int> choose_arities;
  std::vector<std::string> decided;  // TermToString of each Decide condition
  std::vector<std::string> assumed;
  std::vector<Loc> fresh_locs;

  int Choose(int n, Loc) override {
    choose_arities.push_back(n);
    if (choices.empty()) return 0;
    int c = choices.front();
    choices.pop_front();
    return c;
  }
  Value Fresh(sym::Sort sort, Loc loc) override {
    fresh_locs.push_back(loc);
    return Value::Sym(sym::MkVar(sort, next_id++, "f"));
  }
  bool Decide(const sym::TermRef& cond, Loc) override {
    decided.push_back(sym::TermToString(cond));
    if (decisions.empty()) return true;
    bool d = decisions.front();
    decisions.pop_front();
    return d;
  }
  bool Assume(const sym::TermRef& cond, Loc) override {
    assumed.push_back(sym::TermToString(cond));
    return assume_answer;
  }
  bool Possible(const sym::TermRef&) override { return possible_answer; }
};

Value J(const std::string& json) {
  auto v = ir::ParseJson(json);
  EXPECT_TRUE(v.ok()) << json << ": " << v.status();
  return v.ok() ? *v : Value::Null();
}

struct StepRun {
  absl::Status status;
  StepOutput out;
};

StepRun RunOnce(const Spec& spec, const Value& request, ScriptOracle* oracle,
                const std::vector<Value>* globals = nullptr, const Value& conn = Value::Int(0)) {
  StepRun r;
  Interpreter interp(&spec);
  r.status = interp.RunHandler(globals ? *globals : spec.initial_globals, request, conn, oracle, &r.out);
  return r;
}

// Expects a FailedPrecondition "t.dspec:LOC: ...WHAT..." from the handler.
void ExpectFault(const std::string& src, const Value& request, const std::string& loc, const std::string& what) {
  auto spec = MustLoad(src);
  ASSERT_NE(spec, nullptr);
  ScriptOracle oracle;
  StepRun r = RunOnce(*spec, request, &oracle);
  ASSERT_FALSE(r.status.ok()) << "handler unexpectedly succeeded:\n" << src;
  EXPECT_EQ(r.status.code(), absl::StatusCode::kFailedPrecondition) << r.status;
  EXPECT_TRUE(absl::StartsWith(r.status.message(), absl::StrCat("t.dspec:", loc, ": ")))
      << "want at " << loc << ", got: " << r.status.message();
  EXPECT_TRUE(absl::StrContains(r.status.message(), what)) << "want '" << what << "', got: " << r.status.message();
}

TEST(InterpreterTest, SendsAndUpdatesGlobals) {
  auto spec = MustLoad(Src({
      "spec t;",
      "var count = 0;",
      "var seen: map<string, int> = {};",
      "on recv q from c {",
      "  count = count + 1;",
      "  seen = seen.set(q.name, count);",
      "  send c { hello: q.name, n: count };",
      "  send c { second: true };",
      "}",
  }));
  ASSERT_NE(spec, nullptr);
  ScriptOracle oracle;
  StepRun r = RunOnce(*spec, J(R"({"name":"ann"})"), &oracle, nullptr, Value::Int(7));
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_FALSE(r.out.killed);
  ASSERT_EQ(r.out.sends.size(), 2u);
  EXPECT_EQ(r.out.sends[0].conn, Value::Int(7));
  EXPECT_EQ(r.out.sends[0].msg, J(R"({"hello":"ann","n":1})"));
  EXPECT_EQ(r.out.sends[0].loc.line, 7);
  EXPECT_EQ(r.out.sends[0].loc.col, 3);
  EXPECT_EQ(r.out.sends[1].msg, J(R"({"second":true})"));
  ASSERT_EQ(r.out.globals.size(), 2u);
  EXPECT_EQ(r.out.globals[0], Value::Int(1));
  EXPECT_EQ(r.out.globals[1], J(R"({"ann":1})"));
  // The initial state is untouched; a second step continues from the output.
  EXPECT_EQ(spec->initial_globals[0], Value::Int(0));
  StepRun r2 = RunOnce(*spec, J(R"({"name":"bob"})"), &oracle, &r.out.globals);
  ASSERT_TRUE(r2.status.ok()) << r2.status;
  EXPECT_EQ(r2.out.globals[0], Value::Int(2));
  EXPECT_EQ(r2.out.globals[1], J(R"({"ann":1,"bob":2})"));
  EXPECT_EQ(r.out.globals[0], Value::Int(1));
}

TEST(InterpreterTest, KvPutThenGet) {
  auto spec = LoadSpecFile(absl::StrCat(DUALSWARM_SOURCE_DIR, "/specs/kv.dspec"));
  ASSERT_TRUE(spec.ok()) << spec.status();
  ScriptOracle oracle;
  StepRun put = RunOnce(**spec, J(R"({"op":"put","key":"k","value":"v1"})"), &oracle);
  ASSERT_TRUE(put.status.ok()) << put.status;
  ASSERT_EQ(put.out.sends.size(), 1u);
  EXPECT_EQ(put.out.sends[0].msg, J(R"({"ok":true})"));
  StepRun get = RunOnce(**spec, J(R"({"op":"get","key":"k"})"), &oracle, &put.out.globals);
  ASSERT_TRUE(get.status.ok()) << get.status;
  ASSERT_EQ(get.out.sends.size(), 1u);
  EXPECT_EQ(get.out.sends[0].msg, J(R"({"value":"v1"})"));
  StepRun miss = RunOnce(**spec, J(R"({"op":"get","key":"other"})"), &oracle, &put.out.globals);
  ASSERT_TRUE(miss.status.ok()) << miss.status;
  EXPECT_EQ(miss.out.sends[0].msg, J(R"({"value":null})"));
  StepRun app = RunOnce(**spec, J(R"({"op":"append","key":"k","value":"+"})"), &oracle, &put.out.globals);
  ASSERT_TRUE(app.status.ok()) << app.status;
  StepRun get2 = RunOnce(**spec, J(R"({"op":"get","key":"k"})"), &oracle, &app.out.globals);
  EXPECT_EQ(get2.out.sends[0].msg, J(R"({"value":"v1+"})"));
  // A malformed request gets an error with a fresh (symbolic) text.
  StepRun bad = RunOnce(**spec, J(R"({"op":"nope"})"), &oracle);
  ASSERT_TRUE(bad.status.ok()) << bad.status;
  ASSERT_EQ(bad.out.sends.size(), 1u);
  const Value* err = bad.out.sends[0].msg.Find("error");
  ASSERT_NE(err, nullptr);
  EXPECT_TRUE(err->is_sym());
  EXPECT_EQ(oracle.fresh_locs.size(), 1u);
}

TEST(InterpreterTest, EitherAsksTheOracle) {
  auto spec = MustLoad(Src({
      "spec t;",
      "on recv q from c {",
      "  send c { s: either { 201 } or { 204 } or { 200 } };",
      "}",
  }));
  ASSERT_NE(spec, nullptr);
  for (int k = 0; k < 3; ++k) {
    ScriptOracle oracle;
    oracle.choices = {k};
    StepRun r = RunOnce(*spec, J("{}"), &oracle);
    ASSERT_TRUE(r.status.ok()) << r.status;
    EXPECT_EQ(oracle.choose_arities, std::vector<int>{3});
    EXPECT_EQ(r.out.sends[0].msg, Value::Map({{"s", Value::Int(k == 0 ? 201 : k == 1 ? 204 : 200)}}));
  }
}

TEST(InterpreterTest, SymbolicBranchAsksTheOracleConcreteDoesNot) {
  auto spec = MustLoad(Src({
      "spec t;",
      "on recv q from c {",
      "  let tag = fresh string;",
      "  if q.n > 3 { send c { big: true }; }",
      "  if starts_with(tag, \"W/\") { send c { weak: tag }; } else { send c { strong: tag }; }",
      "}",
  }));
  ASSERT_NE(spec, nullptr);
  {
    ScriptOracle oracle;
    oracle.decisions = {true};
    StepRun r = RunOnce(*spec, J(R"({"n":5})"), &oracle);
    ASSERT_TRUE(r.status.ok()) << r.status;
    ASSERT_EQ(r.out.sends.size(), 2u);
    EXPECT_EQ(r.out.sends[0].msg, J(R"({"big":true})"));
    ASSERT_NE(r.out.sends[1].msg.Find("weak"), nullptr);
    EXPECT_TRUE(r.out.sends[1].msg.Find("weak")->is_sym());
    EXPECT_EQ(oracle.decided, std::vector<std::string>{"starts_with(f#1, \"W/\")"});
  }
  {
    ScriptOracle oracle;
    oracle.decisions = {false};
    StepRun r = RunOnce(*spec, J(R"({"n":1})"), &oracle);
    ASSERT_TRUE(r.status.ok()) << r.status;
    ASSERT_EQ(r.out.sends.size(), 1u);
    EXPECT_NE(r.out.sends[0].msg.Find("strong"), nullptr);
    EXPECT_EQ(oracle.decided.size(), 1u);
  }
}

TEST(InterpreterTest, MatchOnSymbolicLiteralDecides) {
  auto spec = MustLoad(Src({
      "spec t;",
      "on recv q from c {",
      "  let n = fresh int;",
      "  match n { 1 => send c { one: true }, _ => send c { other: n } }",
      "}",
  }));
  ASSERT_NE(spec, nullptr);
  ScriptOracle oracle;
  oracle.decisions = {false};
  StepRun r = RunOnce(*spec, J("{}"), &oracle);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(oracle.decided, std::vector<std::string>{"(f#1 == 1)"});
  ASSERT_EQ(r.out.sends.size(), 1u);
  EXPECT_NE(r.out.sends[0].msg.Find("other"), nullptr);
}

TEST(InterpreterTest, AssumeKillsThePath) {
  auto spec = MustLoad(Src({
      "spec t;",
      "var n = 0;",
      "on recv q from c {",
      "  n = 1;",
      "  assume q.ok;",
      "  let s = fresh string;",
      "  assume len(s) == 2;",
      "  send c { s: s };",
      "}",
  }));
  ASSERT_NE(spec, nullptr);
  {
    ScriptOracle oracle;
    StepRun r = RunOnce(*spec, J(R"({"ok":false})"), &oracle);
    ASSERT_TRUE(r.status.ok()) << r.status;
    EXPECT_TRUE(r.out.killed);
    EXPECT_TRUE(r.out.sends.empty());
    EXPECT_TRUE(oracle.assumed.empty());
  }
  {
    ScriptOracle oracle;
    oracle.assume_answer = false;
    StepRun r = RunOnce(*spec, J(R"({"ok":true})"), &oracle);
    ASSERT_TRUE(r.status.ok()) << r.status;
    EXPECT_TRUE(r.out.killed);
    EXPECT_EQ(oracle.assumed, std::vector<std::string>{"(len(f#1) == 2)"});
  }
  {
    ScriptOracle oracle;
    StepRun r = RunOnce(*spec, J(R"({"ok":true})"), &oracle);
    ASSERT_TRUE(r.status.ok()) << r.status;
    EXPECT_FALSE(r.out.killed);
    EXPECT_EQ(r.out.sends.size(), 1u);
    EXPECT_EQ(r.out.globals[0], Value::Int(1));
  }
}

TEST(InterpreterTest, Builtins) {
  auto spec = MustLoad(Src({
      "spec t;",
      "on recv q from c {",
      "  let m = {b: 2, a: 1};",
      "  let l = [1, 2];",
      "  send c {",
      "    len_s: len(\"héllo\"), len_l: len(l), len_m: len(m),",
      "    sw: starts_with(\"hello\", \"he\"), ew: ends_with(\"hello\", \"lo\"),",
      "    cs: contains(\"hello\", \"ll\"), cl: contains(l, 2), cl2: l.contains(3),",
      "    sub: substr(\"hello\", 1, 3), sub2: substr(\"hello\", 3), sub3: substr(\"hi\", 5, 1),",
      "    str: str(-12) + str(\"x\"),",
      "    has: has(m, \"a\"), get: m.get(\"zz\"), set: m.set(\"c\", 3), rm: m.remove(\"a\"),",
      "    keys: keys(m), values: values(m), push: push(l, 3), cat: l + [9],",
      "    is_some: is_some(some(1)), is_none: is_none(none), or_else: or_else(none, 5),",
      "    or_else2: or_else(some(4), 5), idx: m[\"b\"] + l[1],",
      "    cmp: \"abc\" < \"abd\" && 3 >= 3 && !(2 > 3) && 1 != 2,",
      "    arith: (7 / 2) * 10 + 7 % 2 - -1,",
      "  };",
      "}",
  }));
  ASSERT_NE(spec, nullptr);
  ScriptOracle oracle;
  StepRun r = RunOnce(*spec, J("{}"), &oracle);
  ASSERT_TRUE(r.status.ok()) << r.status;
  ASSERT_EQ(r.out.sends.size(), 1u);
  const Value& m = r.out.sends[0].msg;
  auto f = [&](const char* k) {
    const Value* v = m.Find(k);
    EXPECT_NE(v, nullptr) << k;
    return v ? ir::ToJson(*v) : std::string("<absent>");
  };
  EXPECT_EQ(f("len_s"), "6");  // bytes
  EXPECT_EQ(f("len_l"), "2");
  EXPECT_EQ(f("len_m"), "2");
  EXPECT_EQ(f("sw"), "true");
  EXPECT_EQ(f("ew"), "true");
  EXPECT_EQ(f("cs"), "true");
  EXPECT_EQ(f("cl"), "true");
  EXPECT_EQ(f("cl2"), "false");
  EXPECT_EQ(f("sub"), "\"ell\"");
  EXPECT_EQ(f("sub2"), "\"lo\"");
  EXPECT_EQ(f("sub3"), "\"\"");
  EXPECT_EQ(f("str"), "\"-12x\"");
  EXPECT_EQ(f("has"), "true");
  EXPECT_EQ(m.Find("get")->ToString(), "none");
  EXPECT_EQ(f("set"), R"({"a":1,"b":2,"c":3})");
  EXPECT_EQ(f("rm"), R"({"b":2})");
  EXPECT_EQ(f("keys"), R"(["a","b"])");
  EXPECT_EQ(f("values"), "[1,2]");
  EXPECT_EQ(f("push"), "[1,2,3]");
  EXPECT_EQ(f("cat"), "[1,2,9]");
  EXPECT_EQ(f("is_some"), "true");
  EXPECT_EQ(f("is_none"), "true");
  EXPECT_EQ(f("or_else"), "5");
  EXPECT_EQ(f("or_else2"), "4");
  EXPECT_EQ(f("idx"), "4");
  EXPECT_EQ(f("cmp"), "true");
  EXPECT_EQ(f("arith"), "32");
}

TEST(InterpreterTest, HeaderParsingBuiltins) {
  auto spec = MustLoad(Src({
      "spec t;",
      "on recv q from c {",
      "  send c {",
      "    parts: split(q.conn, \",\"), one: split(\"a\", \",\"), tokens: [trim(\" \\tx-a \"), trim(\"\\t \")],",
      "    n: to_int(\"0042\"), bad: [to_int(\"\"), to_int(\"-5\"), to_int(\" 5\"), to_int(\"5s\")],",
      "    huge: to_int(\"99999999999999999999999\") == 9223372036854775807,",
      "  };",
      "}",
  }));
  ASSERT_NE(spec, nullptr);
  ScriptOracle oracle;
  StepRun r = RunOnce(*spec, J(R"({"conn":"close, x-a,"})"), &oracle);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(
      r.out.sends[0].msg,
      J(R"({"parts":["close"," x-a",""],"one":["a"],"tokens":["x-a",""],"n":42,"bad":[-1,-1,-1,-1],"huge":true})"));
}

TEST(InterpreterTest, SplitAndTrimNeedConcreteStringsAndSplitASeparator) {
  for (const char* call : {"split(fresh string, \",\")", "trim(fresh string)", "split(\"a\", \"\")", "trim(3)"}) {
    auto spec = MustLoad(
        Src({"spec t;", "on recv q from c {", absl::StrCat("  let x = ", call, ";").c_str(), "  send c {};", "}"}));
    ASSERT_NE(spec, nullptr) << call;
    ScriptOracle oracle;
    StepRun r = RunOnce(*spec, J("{}"), &oracle);
    EXPECT_FALSE(r.status.ok()) << call;
    EXPECT_TRUE(absl::StrContains(r.status.message(), "t.dspec:3:")) << r.status;
  }
}

TEST(InterpreterTest, UserFunctionsAndRecursion) {
  auto spec = MustLoad(Src({
      "spec t;",
      "fn fact(n) { if n <= 1 { 1 } else { n * fact(n - 1) } }",
      "fn weak(t) { if starts_with(t, \"W/\") { substr(t, 2) } else { t } }",
      "on recv q from c { send c { f: fact(q.n), w: weak(q.tag) }; }",
  }));
  ASSERT_NE(spec, nullptr);
  ScriptOracle oracle;
  StepRun r = RunOnce(*spec, J(R"({"n":10,"tag":"W/\"x\""})"), &oracle);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(r.out.sends[0].msg, J(R"({"f":3628800,"w":"\"x\""})"));
}

TEST(InterpreterTest, AnIntermediarySendsToTheOriginWithATagAndGetsItBack) {
  auto spec = MustLoad(Relay());
  ASSERT_NE(spec, nullptr);
  Interpreter interp(spec.get());
  ASSERT_TRUE(interp.HasOriginRole());
  ScriptOracle oracle;
  StepRun fwd = RunOnce(*spec, J(R"({"op":"get","id":"abc"})"), &oracle, nullptr, Value::Int(3));
  ASSERT_TRUE(fwd.status.ok()) << fwd.status;
  ASSERT_EQ(fwd.out.sends.size(), 1u);
  EXPECT_TRUE(fwd.out.sends[0].to_origin);
  EXPECT_EQ(fwd.out.sends[0].conn, J(R"({"c":3,"n":1})"));
  EXPECT_EQ(fwd.out.sends[0].msg, J(R"({"op":"get","id":"abc"})"));

  StepOutput back;
  absl::Status s = interp.RunOriginHandler(fwd.out.globals, J(R"({"v":"x"})"), fwd.out.sends[0].conn, &oracle, &back);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(back.sends.size(), 1u);
  EXPECT_FALSE(back.sends[0].to_origin);
  EXPECT_EQ(back.sends[0].conn, Value::Int(3));
  EXPECT_EQ(back.sends[0].msg, J(R"({"v":"x","n":1})"));
}

TEST(InterpreterTest, AnOriginTagMustBeConcrete) {
  auto spec =
      MustLoad(Src({"spec t;", "on recv q from c { send origin(fresh int) q; }", "on recv r from t: origin { }"}));
  ASSERT_NE(spec, nullptr);
  ScriptOracle oracle;
  StepRun r = RunOnce(*spec, J("{}"), &oracle);
  EXPECT_EQ(r.status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(r.status.message(), "t.dspec:2:25: the tag of `send origin(T)` must be concrete"))
      << r.status;
}

TEST(InterpreterTest, ShortCircuitSkipsFaults) {
  auto spec = MustLoad(Src({
      "spec t;",
      "on recv q from c {",
      "  send c { a: false && 1 / 0 == 1, b: true || none!, c: has(q, \"k\") && q.k == 1 };",
      "}",
  }));
  ASSERT_NE(spec, nullptr);
  ScriptOracle oracle;
  StepRun r = RunOnce(*spec, J("{}"), &oracle);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(r.out.sends[0].msg, J(R"({"a":false,"b":true,"c":false})"));
}

TEST(InterpreterTest, StructuralEqualityWithSymbolicLeaves) {
  auto spec = MustLoad(Src({
      "spec t;",
      "on recv q from c {",
      "  let s = fresh string;",
      "  send c { eq: {a: s, b: [1]} == {a: \"x\", b: [1]}, ne: {a: s} == {a: s, b: 1}, k: [s] == [1] };",
      "}",
  }));
  ASSERT_NE(spec, nullptr);
  ScriptOracle oracle;
  StepRun r = RunOnce(*spec, J("{}"), &oracle);
  ASSERT_TRUE(r.status.ok()) << r.status;
  const Value& m = r.out.sends[0].msg;
  ASSERT_TRUE(m.Find("eq")->is_sym());
  EXPECT_EQ(m.Find("eq")->ToString(), "(f#1 == \"x\")");
  EXPECT_EQ(*m.Find("ne"), Value::Bool(false));
  EXPECT_EQ(*m.Find("k"), Value::Bool(false));
}

TEST(InterpreterTest, RuntimeErrorsCarryLocations) {
  const Value req = J(R"({"a":1,"o":null})");
  ExpectFault(Src({"spec t;", "on recv q from c {", "  let x = none;", "  send c { v: x! };", "}"}), req, "4:16",
              "unwrapped `none` with `!`");
  ExpectFault(Src({"spec t;", "on recv q from c {", "  send c { v: q.missing };", "}"}), req, "3:16",
              "record has no field 'missing' (fields: a, o)");
  ExpectFault(Src({"spec t;", "on recv q from c {", "  let z = q.a - 1;", "  send c { v: q.a / z };", "}"}), req,
              "4:19", "division by zero");
  ExpectFault(Src({"spec t;", "on recv q from c {", "  send c { v: 5 % 0 };", "}"}), req, "3:17", "division by zero");
  ExpectFault(Src({"spec t;", "on recv q from c {", "  assert q.a == 2;", "  send c {};", "}"}), req, "3:3",
              "assertion failed");
  ExpectFault(Src({"spec t;", "on recv q from c {", "  send c { v: [1, 2][2] };", "}"}), req, "3:21",
              "list index 2 out of range (length 2)");
  ExpectFault(Src({"spec t;", "on recv q from c {", "  send c { v: {k: 1}[\"j\"] };", "}"}), req, "3:21",
              "key \"j\" is absent");
  ExpectFault(Src({"spec t;", "on recv q from c {", "  send c { v: 1 + \"a\" };", "}"}), req, "3:17",
              "`+` needs two ints, two strings or two lists, got int and string");
  // A postfix expression is located at its operator: here the '.' of q.a.
  ExpectFault(Src({"spec t;", "on recv q from c {", "  if q.a { send c {}; }", "}"}), req, "3:7",
              "condition must be a bool, got int 1");
  ExpectFault(Src({"spec t;", "on recv q from c {", "  match q.a { 2 => send c {} }", "}"}), req, "3:3",
              "no `match` arm matches 1");
  ExpectFault(Src({"spec t;", "on recv q from c {", "  send c { v: q.a.b };", "}"}), req, "3:18",
              "field 'b' needs a record, got int 1");
  ExpectFault(Src({"spec t;", "on recv q from c {", "  send c { v: get(q, \"o\").x };", "}"}), req, "3:26",
              "field 'x' of an option");
  ExpectFault(Src({"spec t;", "on recv q from c {", "  send c { v: len(5) };", "}"}), req, "3:15",
              "argument 1 of len must be string, got int 5");
  ExpectFault(Src({"spec t;", "on recv q from c {", "  let s = fresh string;", "  send c { v: has(q, s) };", "}"}), req,
              "4:15", "map key must be concrete");
  ExpectFault(Src({"spec t;", "on recv q from c {", "  let n = fresh int;", "  send c { v: 10 / n };", "}"}), req,
              "4:18", "must be a concrete int here");
  ExpectFault(Src({"spec t;", "fn loop(n) { loop(n + 1) }", "on recv q from c { send c { v: loop(0) }; }"}), req,
              "2:14", "call depth exceeds 200");
}

TEST(InterpreterTest, IntegerOverflowIsASpecErrorNotACrash) {
  const Value req = J(R"({"max":9223372036854775807,"min":-9223372036854775808})");
  ExpectFault(Src({"spec t;", "on recv q from c {", "  send c { v: q.max + 1 };", "}"}), req, "3:21",
              "integer overflow in `+`");
  ExpectFault(Src({"spec t;", "on recv q from c {", "  send c { v: q.min - 1 };", "}"}), req, "3:21",
              "integer overflow in `-`");
  ExpectFault(Src({"spec t;", "on recv q from c {", "  send c { v: q.max * 2 };", "}"}), req, "3:21",
              "integer overflow in `*`");
  ExpectFault(Src({"spec t;", "on recv q from c {", "  send c { v: -q.min };", "}"}), req, "3:15",
              "integer overflow in `-`");
  // INT64_MIN / -1 traps (SIGFPE) on x86 when done naively.
  ExpectFault(Src({"spec t;", "on recv q from c {", "  send c { v: q.min / -1 };", "}"}), req, "3:21",
              "integer overflow in `/`");
  auto spec = MustLoad(Src({"spec t;", "on recv q from c { send c { r: q.min % -1, d: q.min / 1 }; }"}));
  ASSERT_NE(spec, nullptr);
  ScriptOracle oracle;
  StepRun r = RunOnce(*spec, req, &oracle);
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(r.out.sends[0].msg, J(R"({"d":-9223372036854775808,"r":0})"));
}

TEST(InterpreterTest, SymbolicAssertThatMayFailIsASpecError) {
  auto spec =
      MustLoad(Src({"spec t;", "on recv q from c {", "  let n = fresh int;", "  assert n > 0;", "  send c {};", "}"}));
  ASSERT_NE(spec, nullptr);
  ScriptOracle oracle;
  oracle.possible_answer = true;  // n > 0 can be false
  StepRun r = RunOnce(*spec, J("{}"), &oracle);
  ASSERT_FALSE(r.status.ok());
  EXPECT_EQ(r.status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StartsWith(r.status.message(), "t.dspec:4:3: assertion may fail: ")) << r.status;
}

TEST(InterpreterTest, AssertThatCannotFailPasses) {
  auto spec = MustLoad(Src({
      "spec t;",
      "on recv q from c {",
      "  let n = fresh int;",
      "  assert n == n;",  // folds to true
      "  assert len(\"ab\") == 2;",
      "  assert n > 0;",  // symbolic: the oracle says its negation is impossible
      "  send c {};",
      "}",
  }));
  ASSERT_NE(spec, nullptr);
  ScriptOracle oracle;
  oracle.possible_answer = false;
  StepRun r = RunOnce(*spec, J("{}"), &oracle);
  EXPECT_TRUE(r.status.ok()) << r.status;
}

}  // namespace
}  // namespace dualswarm::lang

namespace dualswarm::lang {
namespace {

using testing::FixedGen;

TEST(InterpreterGenTest, AGenThatCannotChooseNamesItsBlockAndLocation) {
  auto spec = MustLoad(Src({"spec t;", kHandler, "gen r {", "  { v: pick([]) }", "}"}));
  ASSERT_NE(spec, nullptr);
  Interpreter interp(spec.get());
  FixedGen gen;
  auto v = interp.RunGen("r", spec->initial_globals, &gen);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(v.status().message(), "t.dspec:4:")) << v.status();
  EXPECT_TRUE(absl::StrContains(v.status().message(), "`gen r` produced nothing: pick() from an empty list"))
      << v.status();
}

TEST(InterpreterGenTest, AGenRunsToItsValue) {
  auto spec = MustLoad(Src({"spec t;", kHandler, "gen r {", "  { v: pick([7]) }", "}"}));
  ASSERT_NE(spec, nullptr);
  Interpreter interp(spec.get());
  FixedGen gen;
  auto v = interp.RunGen("r", spec->initial_globals, &gen);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(ir::ToJson(*v), "{\"v\":7}");
}

// origins() lists the origin endpoints the tester plays ("origin-K", the
// names traces use), none without --origins.
TEST(InterpreterGenTest, OriginsListsTheEndpointsTheTesterPlays) {
  auto spec = MustLoad(Src({"spec t;", kHandler, "gen r {", "  { all: origins(), one: pick(origins()) }", "}"}));
  ASSERT_NE(spec, nullptr);
  FixedGen gen;
  ConnectionNodes two;
  two.origins = 2;
  auto v = Interpreter(spec.get(), two).RunGen("r", spec->initial_globals, &gen);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(ir::ToJson(*v), R"({"all":["origin-0","origin-1"],"one":"origin-0"})");
  v = Interpreter(spec.get()).RunGen("r", spec->initial_globals, &gen);
  ASSERT_FALSE(v.ok());
  EXPECT_TRUE(absl::StrContains(v.status().message(), "pick() from an empty list")) << v.status();
}

TEST(InterpreterGenTest, AnOriginGenAnswersTheRequestItIsGiven) {
  auto spec = MustLoad(Relay());
  ASSERT_NE(spec, nullptr);
  Interpreter interp(spec.get());
  FixedGen gen;
  const Value request = J(R"({"op":"get","id":"abc"})");
  auto v = interp.RunGen("answer", spec->initial_globals, &gen, &request);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(ir::ToJson(*v), R"({"v":"abc"})");
  auto no_request = interp.RunGen("answer", spec->initial_globals, &gen);
  EXPECT_TRUE(absl::StrContains(no_request.status().message(), "`gen answer` is an origin generator"))
      << no_request.status();
  auto with_request = interp.RunGen("request", spec->initial_globals, &gen, &request);
  EXPECT_TRUE(absl::StrContains(with_request.status().message(), "`gen request` is a client generator"))
      << with_request.status();
}

}  // namespace
}  // namespace dualswarm::lang
