#include "ir/parser.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <optional>

#include "ir/lexer.h"

namespace distir {
namespace {

// Tuple types are the only nesting in the grammar; the cap keeps the recursive
// descent within a small stack whatever the input.
constexpr int kMaxTypeDepth = 64;
// Integers stored in a DenseTensor (as doubles) are exact up to 2^53.
constexpr double kMaxExactInt = 9007199254740992.0;

bool IsDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

bool IsIntegerText(std::string_view s) {
  return IsDigits(!s.empty() && s[0] == '-' ? s.substr(1) : s);
}

bool LooksNumeric(std::string_view s) {
  if (s.empty()) return false;
  return (s[0] >= '0' && s[0] <= '9') || s[0] == '-' || s == "inf" || s == "nan";
}

bool LooksLikeDevice(std::string_view s) {
  return s.size() > 1 && s[0] == 'd' && s[1] >= '0' && s[1] <= '9';
}

std::string Plural(int64_t n, std::string_view noun) {
  return std::to_string(n) + " " + std::string(noun) + (n == 1 ? "" : "s");
}

// "2 inputs", "at least 1 input", "2 to 3 inputs".
std::string ArityText(int min, int max, std::string_view noun) {
  if (min == max) return Plural(min, noun);
  if (max == kVariadic) return "at least " + Plural(min, noun);
  return std::to_string(min) + " to " + Plural(max, noun);
}

bool ArityFits(int64_t n, int min, int max) { return n >= min && (max == kVariadic || n <= max); }

// A parsed attribute literal before it meets its spec. `[]` has no kind of its
// own; it takes the list kind the spec asks for.
struct Literal {
  Attribute value;
  bool empty_list = false;
};

// The list attribute of `kind` (int, float, string or device) holding `items`.
Attribute MakeList(AttrType kind, const std::vector<Attribute>& items) {
  switch (kind) {
    case AttrType::kInt: {
      std::vector<int64_t> v;
      for (const Attribute& a : items) v.push_back(a.AsInt());
      return Attribute(std::move(v));
    }
    case AttrType::kFloat: {
      std::vector<double> v;
      for (const Attribute& a : items) {
        v.push_back(a.type() == AttrType::kInt ? static_cast<double>(a.AsInt()) : a.AsFloat());
      }
      return Attribute(std::move(v));
    }
    case AttrType::kString: {
      std::vector<std::string> v;
      for (const Attribute& a : items) v.push_back(a.AsString());
      return Attribute(std::move(v));
    }
    default: {
      std::vector<DeviceId> v;
      for (const Attribute& a : items) v.push_back(a.AsDevice());
      return Attribute(std::move(v));
    }
  }
}

// What follows '=' in an op line: a primitive op or a call.
struct OpHead {
  Token tok;
  OpKind kind = OpKind::kCall;
  const OpInfo* info = nullptr;      // null for a call
  const Function* callee = nullptr;  // null for a primitive op

  std::string Name() const { return std::string(tok.text); }
};

struct ResultRef {
  std::string name;  // empty for '_'
  Token tok;
};

class Parser {
 public:
  Parser(std::string_view text, const std::string& filename)
      : text_(text), filename_(filename), lexer_(text) {
    tok_ = lexer_.Next();
  }

  StatusOr<Module> ParseWholeModule();
  StatusOr<Type> ParseWholeType();
  StatusOr<Sharding> ParseWholeSharding();

 private:
  SourceLoc Loc(const Token& t, size_t offset = 0) const {
    return SourceLoc{filename_, t.line, t.col + static_cast<int>(offset), {}};
  }
  StatusBuilder ErrorAt(const Token& t, size_t offset = 0) const {
    return InvalidArgument(Loc(t, offset));
  }
  void Advance() { tok_ = lexer_.Next(); }
  bool At(TokenKind kind) const { return tok_.kind == kind; }
  bool AtWord(std::string_view word) const { return At(TokenKind::kWord) && tok_.text == word; }
  Status Unexpected(std::string_view expected) const;
  Status Expect(TokenKind kind, std::string_view what);

  Status ParseFunction(Module& module);
  Status ParseMesh(Module& module);
  Status ParseMeshAxes(std::vector<MeshAxis>& axes);
  StatusOr<Sharding> ParseSharding();
  Status ParseAxisList(std::vector<std::string>& axes, TokenKind open = TokenKind::kLSquare,
                       TokenKind close = TokenKind::kRSquare);
  Status ParseIntList(std::vector<int64_t>& values);
  Status ParseOptionalSharding(Value& v);
  Status ParseParams(Function& fn);
  Status ParseBody(Function& fn);
  Status ParseReturn(Function& fn);
  Status CheckNewName(const Function& fn, const Token& t, const std::vector<ResultRef>& same_op);

  Status ParseOpStatement(Function& fn);
  Status ParseResults(const Function& fn, std::vector<ResultRef>& results);
  Status ParseOpHead(OpHead& head);
  Status UndefinedCallee(const Token& t) const;
  Status ParseOperands(const Function& fn, std::vector<Value*>& inputs);
  StatusOr<Value*> ParseOperand(const Function& fn);
  Status CheckArity(const OpHead& head, size_t num_inputs, size_t num_results) const;
  Status ParseResultTypes(const OpHead& head, size_t num_results, std::vector<Type>& types,
                          std::vector<std::optional<Sharding>>& shardings);

  Status ParseAttrDict(const OpHead& head, AttrMap& attrs);
  Status CheckRequiredAttrs(const OpHead& head, const AttrMap& attrs) const;
  StatusOr<Attribute> Coerce(Literal literal, const AttrSpec& spec, const Token& value_tok,
                             const OpHead& head) const;
  StatusOr<Literal> ParseAttrValue(std::optional<AttrType> expected);
  StatusOr<Literal> ParseList(std::optional<AttrType> expected);
  StatusOr<AttrType> UnifyListKind(const std::vector<Attribute>& items,
                                   const std::vector<Token>& toks) const;
  StatusOr<Attribute> ParseWordValue(const Token& t, bool want_device) const;
  StatusOr<Attribute> ParseNumber(const Token& t) const;
  StatusOr<Attribute> ParseDense();
  StatusOr<double> ParseDenseElement(DType dtype);

  StatusOr<Type> ParseType(int depth);
  StatusOr<Type> ParseTensorType();
  StatusOr<Type> ParseScalarType();
  StatusOr<Type> ParseTupleType(int depth);
  StatusOr<DeviceId> ParseOptionalDevice();
  Status ParseShapeWord(const Token& t, bool allow_dynamic, std::string_view what,
                        std::vector<int64_t>& shape, DType& dtype) const;
  Status CheckTensorSize(const Token& t, const std::vector<int64_t>& shape, DType dtype) const;

  std::string_view text_;
  const std::string& filename_;
  Lexer lexer_;
  Token tok_;
  const Module* module_ = nullptr;
  std::string current_fn_;
};

Status Parser::Unexpected(std::string_view expected) const {
  if (At(TokenKind::kError)) return ErrorAt(tok_) << lexer_.error_message();
  return ErrorAt(tok_) << "expected " << expected << " but found " << DescribeToken(tok_);
}

Status Parser::Expect(TokenKind kind, std::string_view what) {
  if (!At(kind)) return Unexpected(what);
  Advance();
  return Status::Ok();
}


StatusOr<Module> Parser::ParseWholeModule() {
  Module module;
  module_ = &module;
  while (!At(TokenKind::kEof)) {
    Status s = AtWord("mesh") ? ParseMesh(module) : ParseFunction(module);
    if (!s.ok()) return s;
  }
  return module;
}

Status Parser::ParseFunction(Module& module) {
  Token func_tok = tok_;
  if (!AtWord("func")) return Unexpected("'func' or 'mesh'");
  Advance();
  if (!At(TokenKind::kFuncName)) return Unexpected("a function name such as '@main'");
  std::string name(tok_.name());
  if (const Function* prev = module.Lookup(name)) {
    return ErrorAt(tok_) << "redefinition of function @" << name << " (first defined at "
                         << prev->loc().line << ":" << prev->loc().col << ")";
  }
  Advance();
  auto fn = std::make_unique<Function>(name);
  fn->set_loc(Loc(func_tok));
  current_fn_ = name;
  DISTIR_RETURN_IF_ERROR(ParseParams(*fn));
  DISTIR_RETURN_IF_ERROR(Expect(TokenKind::kLBrace, "'{'"));
  DISTIR_RETURN_IF_ERROR(ParseBody(*fn));
  module.AddFunction(std::move(fn));
  return Status::Ok();
}

Status Parser::ParseParams(Function& fn) {
  DISTIR_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'('"));
  if (At(TokenKind::kRParen)) {
    Advance();
    return Status::Ok();
  }
  while (true) {
    if (!At(TokenKind::kValueName)) return Unexpected("a parameter such as '%x'");
    Token name_tok = tok_;
    DISTIR_RETURN_IF_ERROR(CheckNewName(fn, name_tok, {}));
    Advance();
    DISTIR_RETURN_IF_ERROR(Expect(TokenKind::kColon, "':'"));
    DISTIR_ASSIGN_OR_RETURN(Type type, ParseType(0));
    Value* param = fn.AddParam(std::string(name_tok.name()), std::move(type), Loc(name_tok));
    DISTIR_RETURN_IF_ERROR(ParseOptionalSharding(*param));
    if (!At(TokenKind::kComma)) return Expect(TokenKind::kRParen, "')'");
    Advance();
  }
}

// mesh @m = <[a = 2, b = 4]> or mesh @m = <[a = 2], devices = [d4, d5]>
Status Parser::ParseMesh(Module& module) {
  Token mesh_tok = tok_;
  Advance();  // 'mesh'
  if (!At(TokenKind::kFuncName)) return Unexpected("a mesh name such as '@mesh'");
  Token name_tok = tok_;
  std::string name(tok_.name());
  if (const Mesh* prev = module.LookupMesh(name)) {
    return ErrorAt(tok_) << "redefinition of mesh @" << name << " (first defined at "
                         << prev->loc().line << ":" << prev->loc().col << ")";
  }
  Advance();
  DISTIR_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'='"));
  DISTIR_RETURN_IF_ERROR(Expect(TokenKind::kLAngle, "'<'"));
  std::vector<MeshAxis> axes;
  DISTIR_RETURN_IF_ERROR(ParseMeshAxes(axes));
  std::vector<DeviceId> devices;
  if (At(TokenKind::kComma)) {
    Advance();
    if (!AtWord("devices")) return Unexpected("'devices'");
    Advance();
    DISTIR_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'='"));
    DISTIR_ASSIGN_OR_RETURN(Literal list, ParseList(AttrType::kDevices));
    if (!list.empty_list && list.value.type() != AttrType::kDevices)
      return ErrorAt(mesh_tok) << "mesh @" << name << " devices must be a list of devices";
    if (!list.empty_list) devices = list.value.AsDevices();
  }
  DISTIR_RETURN_IF_ERROR(Expect(TokenKind::kRAngle, "'>'"));
  Mesh mesh(name, std::move(axes), std::move(devices), Loc(name_tok));
  DISTIR_RETURN_IF_ERROR(mesh.Validate());
  module.AddMesh(std::move(mesh));
  return Status::Ok();
}

// [a = 2, b = 4]
Status Parser::ParseMeshAxes(std::vector<MeshAxis>& axes) {
  DISTIR_RETURN_IF_ERROR(Expect(TokenKind::kLSquare, "'['"));
  while (!At(TokenKind::kRSquare)) {
    if (!At(TokenKind::kWord) || LooksNumeric(tok_.text)) return Unexpected("a mesh axis name");
    MeshAxis axis{std::string(tok_.text), 0};
    Advance();
    DISTIR_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'='"));
    Token size_tok = tok_;
    if (!At(TokenKind::kWord) || !IsIntegerText(tok_.text)) return Unexpected("an axis size");
    DISTIR_ASSIGN_OR_RETURN(Attribute size, ParseNumber(tok_));
    if (size.AsInt() < 1)
      return ErrorAt(size_tok) << "mesh axis '" << axis.name << "' has size " << size.AsInt()
                               << ", expected at least 1";
    axis.size = size.AsInt();
    axes.push_back(std::move(axis));
    Advance();
    if (!At(TokenKind::kComma)) break;
    Advance();
  }
  return Expect(TokenKind::kRSquare, "']'");
}

// [a, b] or {a, b} (possibly empty): mesh axis names.
Status Parser::ParseAxisList(std::vector<std::string>& axes, TokenKind open, TokenKind close) {
  bool brace = open == TokenKind::kLBrace;
  DISTIR_RETURN_IF_ERROR(Expect(open, brace ? "'{'" : "'['"));
  while (!At(close)) {
    if (!At(TokenKind::kWord) || LooksNumeric(tok_.text)) return Unexpected("a mesh axis name");
    axes.emplace_back(tok_.text);
    Advance();
    if (!At(TokenKind::kComma)) break;
    Advance();
  }
  return Expect(close, brace ? "'}'" : "']'");
}

// {0, 64, 127} (possibly empty).
Status Parser::ParseIntList(std::vector<int64_t>& values) {
  DISTIR_RETURN_IF_ERROR(Expect(TokenKind::kLBrace, "'{'"));
  while (!At(TokenKind::kRBrace)) {
    if (!At(TokenKind::kWord) || !IsIntegerText(tok_.text)) return Unexpected("an integer");
    DISTIR_ASSIGN_OR_RETURN(Attribute v, ParseNumber(tok_));
    values.push_back(v.AsInt());
    Advance();
    if (!At(TokenKind::kComma)) break;
    Advance();
  }
  return Expect(TokenKind::kRBrace, "'}'");
}

// <@m, [{a}, {}], partial = sum[b], offsets = [{0, 3, 8}, {}]>
StatusOr<Sharding> Parser::ParseSharding() {
  Sharding s;
  s.loc = Loc(tok_);
  Advance();  // '<'
  if (!At(TokenKind::kFuncName)) return Unexpected("a mesh name such as '@mesh'");
  s.mesh = std::string(tok_.name());
  Advance();
  DISTIR_RETURN_IF_ERROR(Expect(TokenKind::kComma, "','"));
  DISTIR_RETURN_IF_ERROR(Expect(TokenKind::kLSquare, "'['"));
  while (At(TokenKind::kLBrace)) {
    s.dims.emplace_back();
    DISTIR_RETURN_IF_ERROR(ParseAxisList(s.dims.back(), TokenKind::kLBrace, TokenKind::kRBrace));
    if (!At(TokenKind::kComma)) break;
    Advance();
  }
  DISTIR_RETURN_IF_ERROR(Expect(TokenKind::kRSquare, "']'"));
  while (At(TokenKind::kComma)) {
    Advance();
    if (AtWord("partial") && s.partial.empty()) {
      Advance();
      DISTIR_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'='"));
      if (!At(TokenKind::kWord) || !ParseReductionKind(std::string(tok_.text), &s.partial_kind))
        return Unexpected("a reduction kind: sum, max or min");
      Advance();
      DISTIR_RETURN_IF_ERROR(ParseAxisList(s.partial));
      if (s.partial.empty()) return ErrorAt(tok_) << "partial needs at least one mesh axis";
    } else if (AtWord("offsets") && s.offsets.empty()) {
      Advance();
      DISTIR_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'='"));
      DISTIR_RETURN_IF_ERROR(Expect(TokenKind::kLSquare, "'['"));
      while (At(TokenKind::kLBrace)) {
        s.offsets.emplace_back();
        DISTIR_RETURN_IF_ERROR(ParseIntList(s.offsets.back()));
        if (!At(TokenKind::kComma)) break;
        Advance();
      }
      DISTIR_RETURN_IF_ERROR(Expect(TokenKind::kRSquare, "']'"));
    } else {
      return Unexpected("'partial' or 'offsets' (each at most once)");
    }
  }
  DISTIR_RETURN_IF_ERROR(Expect(TokenKind::kRAngle, "'>'"));
  return s;
}

Status Parser::ParseOptionalSharding(Value& v) {
  if (!At(TokenKind::kLAngle)) return Status::Ok();
  DISTIR_ASSIGN_OR_RETURN(Sharding sharding, ParseSharding());
  v.set_sharding(sharding);
  return Status::Ok();
}

Status Parser::ParseBody(Function& fn) {
  while (true) {
    if (AtWord("return")) return ParseReturn(fn);
    if (At(TokenKind::kValueName) || AtWord("_")) {
      DISTIR_RETURN_IF_ERROR(ParseOpStatement(fn));
      continue;
    }
    if (At(TokenKind::kRBrace)) {
      return ErrorAt(tok_) << "function @" << fn.name() << " has no return statement";
    }
    return Unexpected("a statement or 'return'");
  }
}

Status Parser::ParseReturn(Function& fn) {
  Token return_tok = tok_;
  Advance();
  std::vector<Value*> values;
  if (At(TokenKind::kValueName) || AtWord("_")) {
    DISTIR_RETURN_IF_ERROR(ParseOperands(fn, values));
  }
  fn.SetReturns(std::move(values), Loc(return_tok));
  if (At(TokenKind::kRBrace)) {
    Advance();
    return Status::Ok();
  }
  if (At(TokenKind::kValueName) || AtWord("_") || AtWord("return")) {
    return ErrorAt(tok_) << "statement after return in function @" << fn.name()
                         << ": return must be the last statement";
  }
  return Unexpected("'}'");
}

Status Parser::CheckNewName(const Function& fn, const Token& t,
                            const std::vector<ResultRef>& same_op) {
  std::string name(t.name());
  const SourceLoc* first = nullptr;
  if (const Value* prev = fn.LookupValue(name)) first = &prev->loc();
  SourceLoc same_op_loc;
  for (const ResultRef& r : same_op) {
    if (first == nullptr && r.name == name) {
      same_op_loc = Loc(r.tok);
      first = &same_op_loc;
    }
  }
  if (first == nullptr) return Status::Ok();
  return ErrorAt(t) << "redefinition of value %" << name << " (first defined at " << first->line
                    << ":" << first->col << ")";
}


Status Parser::ParseOpStatement(Function& fn) {
  std::vector<ResultRef> results;
  DISTIR_RETURN_IF_ERROR(ParseResults(fn, results));
  DISTIR_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'='"));
  OpHead head;
  DISTIR_RETURN_IF_ERROR(ParseOpHead(head));
  std::vector<Value*> inputs;
  DISTIR_RETURN_IF_ERROR(Expect(TokenKind::kLParen, "'('"));
  if (!At(TokenKind::kRParen)) DISTIR_RETURN_IF_ERROR(ParseOperands(fn, inputs));
  DISTIR_RETURN_IF_ERROR(Expect(TokenKind::kRParen, "')'"));
  DISTIR_RETURN_IF_ERROR(CheckArity(head, inputs.size(), results.size()));
  AttrMap attrs;
  if (At(TokenKind::kLBrace)) DISTIR_RETURN_IF_ERROR(ParseAttrDict(head, attrs));
  DISTIR_RETURN_IF_ERROR(CheckRequiredAttrs(head, attrs));
  std::vector<Type> types;
  std::vector<std::optional<Sharding>> shardings;
  if (At(TokenKind::kColon)) {
    DISTIR_RETURN_IF_ERROR(ParseResultTypes(head, results.size(), types, shardings));
  }
  std::vector<std::string> names;
  names.reserve(results.size());
  for (ResultRef& r : results) names.push_back(std::move(r.name));
  std::string callee = head.callee != nullptr ? head.callee->name() : std::string();
  Op* op = fn.AddOp(head.kind, std::move(inputs), std::move(attrs), names, Loc(results[0].tok),
                    std::move(callee));
  for (size_t i = 0; i < results.size(); ++i) {
    Value* v = op->result(static_cast<int>(i));
    v->set_loc(Loc(results[i].tok));
    if (!types.empty()) v->set_type(std::move(types[i]));
    if (!shardings.empty() && shardings[i].has_value()) v->set_sharding(*shardings[i]);
  }
  return Status::Ok();
}

Status Parser::ParseResults(const Function& fn, std::vector<ResultRef>& results) {
  while (true) {
    if (AtWord("_")) {
      results.push_back({std::string(), tok_});
    } else if (At(TokenKind::kValueName)) {
      DISTIR_RETURN_IF_ERROR(CheckNewName(fn, tok_, results));
      results.push_back({std::string(tok_.name()), tok_});
    } else {
      return Unexpected("a result such as '%y' or '_'");
    }
    Advance();
    if (!At(TokenKind::kComma)) return Status::Ok();
    Advance();
  }
}

Status Parser::ParseOpHead(OpHead& head) {
  head.tok = tok_;
  if (At(TokenKind::kFuncName)) {
    head.callee = module_->Lookup(std::string(tok_.name()));
    if (head.callee == nullptr) return UndefinedCallee(tok_);
    Advance();
    return Status::Ok();
  }
  if (!At(TokenKind::kWord)) return Unexpected("an op name or a call such as '@f'");
  std::optional<OpKind> kind = LookupOpKind(tok_.text);
  if (!kind.has_value()) return ErrorAt(tok_) << "unknown op '" << tok_.text << "'";
  head.kind = *kind;
  head.info = &GetOpInfo(*kind);
  Advance();
  return Status::Ok();
}

// Distinguishes a callee defined later in the file from one never defined, so
// that the message says what to do.
Status Parser::UndefinedCallee(const Token& t) const {
  std::string_view name = t.name();
  if (name == current_fn_) {
    return ErrorAt(t) << "recursive call of @" << name
                      << ": a function may only call functions defined before it";
  }
  Lexer scan(text_);
  bool after_func = false;
  for (Token s = scan.Next(); s.kind != TokenKind::kEof; s = scan.Next()) {
    if (after_func && s.kind == TokenKind::kFuncName && s.name() == name) {
      return ErrorAt(t) << "call of @" << name << " must follow its definition (at " << s.line
                        << ":" << s.col << ")";
    }
    after_func = s.kind == TokenKind::kWord && s.text == "func";
  }
  return ErrorAt(t) << "undefined function @" << name;
}

Status Parser::ParseOperands(const Function& fn, std::vector<Value*>& inputs) {
  while (true) {
    DISTIR_ASSIGN_OR_RETURN(Value * v, ParseOperand(fn));
    inputs.push_back(v);
    if (!At(TokenKind::kComma)) return Status::Ok();
    Advance();
  }
}

StatusOr<Value*> Parser::ParseOperand(const Function& fn) {
  if (AtWord("_")) return ErrorAt(tok_) << "the anonymous result '_' cannot be used";
  if (!At(TokenKind::kValueName)) return Unexpected("an operand such as '%x'");
  Value* v = fn.LookupValue(std::string(tok_.name()));
  if (v == nullptr) return ErrorAt(tok_) << "undefined value " << tok_.text;
  Advance();
  return v;
}

Status Parser::CheckArity(const OpHead& head, size_t num_inputs, size_t num_results) const {
  int min_in = 0, max_in = 0, min_out = 0, max_out = 0;
  if (head.callee != nullptr) {
    min_in = max_in = head.callee->num_params();
    min_out = max_out = static_cast<int>(head.callee->returns().size());
  } else {
    min_in = head.info->min_inputs;
    max_in = head.info->max_inputs;
    min_out = head.info->min_outputs;
    max_out = head.info->max_outputs;
  }
  const char* in_noun = head.callee != nullptr ? "argument" : "input";
  if (!ArityFits(static_cast<int64_t>(num_inputs), min_in, max_in)) {
    return ErrorAt(head.tok) << head.Name() << " takes " << ArityText(min_in, max_in, in_noun)
                             << ", got " << num_inputs;
  }
  if (!ArityFits(static_cast<int64_t>(num_results), min_out, max_out)) {
    return ErrorAt(head.tok) << head.Name() << " returns " << ArityText(min_out, max_out, "result")
                             << ", got " << num_results;
  }
  return Status::Ok();
}

Status Parser::ParseResultTypes(const OpHead& head, size_t num_results, std::vector<Type>& types,
                                std::vector<std::optional<Sharding>>& shardings) {
  Advance();  // ':'
  Token first = tok_;
  while (true) {
    DISTIR_ASSIGN_OR_RETURN(Type t, ParseType(0));
    types.push_back(std::move(t));
    shardings.emplace_back();
    if (At(TokenKind::kLAngle)) {
      DISTIR_ASSIGN_OR_RETURN(shardings.back(), ParseSharding());
    }
    if (!At(TokenKind::kComma)) break;
    Advance();
  }
  if (types.size() == num_results) return Status::Ok();
  return ErrorAt(first) << head.Name() << " has " << Plural(num_results, "result") << " but "
                        << types.size() << (types.size() == 1 ? " type was" : " types were")
                        << " given";
}


Status Parser::ParseAttrDict(const OpHead& head, AttrMap& attrs) {
  Advance();  // '{'
  while (true) {
    if (!At(TokenKind::kWord)) return Unexpected("an attribute name");
    Token name_tok = tok_;
    std::string name(tok_.text);
    const AttrSpec* spec = head.info != nullptr ? head.info->FindAttr(name) : nullptr;
    if (head.info != nullptr && spec == nullptr) {
      return ErrorAt(name_tok) << "unknown attribute '" << name << "' for op " << head.Name();
    }
    if (attrs.count(name) != 0) return ErrorAt(name_tok) << "duplicate attribute '" << name << "'";
    Advance();
    DISTIR_RETURN_IF_ERROR(Expect(TokenKind::kEqual, "'='"));
    Token value_tok = tok_;
    std::optional<AttrType> expected;
    if (spec != nullptr) expected = spec->type;
    DISTIR_ASSIGN_OR_RETURN(Literal literal, ParseAttrValue(expected));
    if (spec == nullptr) {
      attrs.emplace(std::move(name), std::move(literal.value));
    } else {
      DISTIR_ASSIGN_OR_RETURN(Attribute a, Coerce(std::move(literal), *spec, value_tok, head));
      attrs.emplace(std::move(name), std::move(a));
    }
    if (!At(TokenKind::kComma)) return Expect(TokenKind::kRBrace, "'}'");
    Advance();
  }
}

Status Parser::CheckRequiredAttrs(const OpHead& head, const AttrMap& attrs) const {
  if (head.info == nullptr) return Status::Ok();
  for (const AttrSpec& spec : head.info->attrs) {
    if (spec.required && attrs.count(std::string(spec.name)) == 0) {
      return ErrorAt(head.tok) << "missing required attribute '" << spec.name << "' of "
                               << head.Name();
    }
  }
  return Status::Ok();
}

StatusOr<Attribute> Parser::Coerce(Literal literal, const AttrSpec& spec, const Token& value_tok,
                                   const OpHead& head) const {
  AttrType want = spec.type;
  AttrType have = literal.value.type();
  if (literal.empty_list) {
    switch (want) {
      case AttrType::kInts:
        return Attribute(std::vector<int64_t>{});
      case AttrType::kFloats:
        return Attribute(std::vector<double>{});
      case AttrType::kStrings:
        return Attribute(std::vector<std::string>{});
      case AttrType::kDevices:
        return Attribute(std::vector<DeviceId>{});
      default:
        break;
    }
  } else if (have == want) {
    return std::move(literal.value);
  } else if (have == AttrType::kInt && want == AttrType::kFloat) {
    return Attribute(static_cast<double>(literal.value.AsInt()));
  } else if (have == AttrType::kInts && want == AttrType::kFloats) {
    const std::vector<int64_t>& ints = literal.value.AsInts();
    return Attribute(std::vector<double>(ints.begin(), ints.end()));
  }
  std::string_view got = literal.empty_list ? "list" : AttrTypeName(have);
  return ErrorAt(value_tok) << "attribute '" << spec.name << "' of " << head.Name() << " must be "
                            << AttrTypeName(want) << ", got " << got;
}

StatusOr<Literal> Parser::ParseAttrValue(std::optional<AttrType> expected) {
  if (At(TokenKind::kString)) {
    Literal lit{Attribute(UnquoteString(tok_))};
    Advance();
    return lit;
  }
  if (At(TokenKind::kLSquare)) return ParseList(expected);
  if (At(TokenKind::kLAngle)) {
    DISTIR_ASSIGN_OR_RETURN(Sharding sharding, ParseSharding());
    return Literal{Attribute(std::move(sharding))};
  }
  if (AtWord("dense")) {
    DISTIR_ASSIGN_OR_RETURN(Attribute a, ParseDense());
    return Literal{std::move(a)};
  }
  if (!At(TokenKind::kWord)) return Unexpected("an attribute value");
  bool want_device = expected == AttrType::kDevice;
  DISTIR_ASSIGN_OR_RETURN(Attribute a, ParseWordValue(tok_, want_device));
  Advance();
  return Literal{std::move(a)};
}

// Lists hold ints, floats (ints among floats are widened), strings or devices.
StatusOr<Literal> Parser::ParseList(std::optional<AttrType> expected) {
  Advance();  // '['
  if (At(TokenKind::kRSquare)) {
    Advance();
    return Literal{Attribute(std::vector<int64_t>{}), true};
  }
  std::vector<Attribute> items;
  std::vector<Token> toks;
  bool want_device = expected == AttrType::kDevices;
  while (true) {
    toks.push_back(tok_);
    if (At(TokenKind::kString)) {
      items.emplace_back(UnquoteString(tok_));
    } else if (At(TokenKind::kWord)) {
      DISTIR_ASSIGN_OR_RETURN(Attribute a, ParseWordValue(tok_, want_device));
      items.push_back(std::move(a));
    } else {
      return Unexpected("a list element");
    }
    Advance();
    if (!At(TokenKind::kComma)) break;
    Advance();
  }
  DISTIR_RETURN_IF_ERROR(Expect(TokenKind::kRSquare, "']'"));
  DISTIR_ASSIGN_OR_RETURN(AttrType kind, UnifyListKind(items, toks));
  if (kind != AttrType::kInt && kind != AttrType::kFloat && kind != AttrType::kString &&
      kind != AttrType::kDevice) {
    return ErrorAt(toks[0]) << "lists of " << AttrTypeName(kind) << " are not supported";
  }
  return Literal{MakeList(kind, items)};
}

// All elements alike, or ints and floats mixed (which makes floats).
StatusOr<AttrType> Parser::UnifyListKind(const std::vector<Attribute>& items,
                                         const std::vector<Token>& toks) const {
  AttrType kind = items[0].type();
  for (size_t i = 1; i < items.size(); ++i) {
    AttrType k = items[i].type();
    bool numeric = (k == AttrType::kInt || k == AttrType::kFloat) &&
                   (kind == AttrType::kInt || kind == AttrType::kFloat);
    if (numeric && k == AttrType::kFloat) kind = AttrType::kFloat;
    if (k != kind && !numeric) {
      return ErrorAt(toks[i]) << "list mixes " << AttrTypeName(kind) << " and " << AttrTypeName(k)
                              << " elements";
    }
  }
  return kind;
}

StatusOr<Attribute> Parser::ParseWordValue(const Token& t, bool want_device) const {
  std::string_view w = t.text;
  if (LooksNumeric(w)) return ParseNumber(t);
  if (std::optional<DType> dtype = ParseDType(w)) return Attribute(*dtype);
  if (std::optional<DeviceId> device = ParseDeviceId(w)) return Attribute(*device);
  if (want_device || LooksLikeDevice(w)) return ErrorAt(t) << "bad device '" << w << "'";
  return ErrorAt(t) << "expected an attribute value but found '" << w << "'";
}

// Integers are int64 and floats double; both are checked for overflow rather
// than silently saturated, so that what is printed back is what was read.
StatusOr<Attribute> Parser::ParseNumber(const Token& t) const {
  std::string_view w = t.text;
  const char* begin = w.data();
  const char* end = w.data() + w.size();
  if (IsIntegerText(w)) {
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(begin, end, v);
    if (ec != std::errc() || ptr != end) {
      return ErrorAt(t) << "integer literal '" << w << "' is out of range";
    }
    return Attribute(v);
  }
  double d = 0;
  auto [ptr, ec] = std::from_chars(begin, end, d);
  if (ec == std::errc::result_out_of_range && ptr == end) {
    // Underflow to a subnormal or zero is fine; only overflow is an error.
    d = std::strtod(std::string(w).c_str(), nullptr);
    if (std::isinf(d)) return ErrorAt(t) << "float literal '" << w << "' is out of range";
    return Attribute(d);
  }
  if (ec != std::errc() || ptr != end) return ErrorAt(t) << "bad number '" << w << "'";
  return Attribute(d);
}

StatusOr<Attribute> Parser::ParseDense() {
  Token dense_tok = tok_;
  Advance();
  DISTIR_RETURN_IF_ERROR(Expect(TokenKind::kLAngle, "'<'"));
  if (!At(TokenKind::kWord)) return Unexpected("a shape and dtype such as '2x3xi64'");
  DenseTensor tensor;
  DISTIR_RETURN_IF_ERROR(
      ParseShapeWord(tok_, /*allow_dynamic=*/false, "dense tensor", tensor.shape, tensor.dtype));
  Advance();
  DISTIR_RETURN_IF_ERROR(Expect(TokenKind::kRAngle, "'>'"));
  DISTIR_RETURN_IF_ERROR(Expect(TokenKind::kLSquare, "'['"));
  while (!At(TokenKind::kRSquare)) {
    DISTIR_ASSIGN_OR_RETURN(double v, ParseDenseElement(tensor.dtype));
    tensor.values.push_back(v);
    if (!At(TokenKind::kComma)) break;
    Advance();
  }
  DISTIR_RETURN_IF_ERROR(Expect(TokenKind::kRSquare, "']'"));
  int64_t want = tensor.NumElements();  // no overflow: ParseShapeWord bounded it
  if (static_cast<int64_t>(tensor.values.size()) != want) {
    return ErrorAt(dense_tok) << "dense tensor of shape [" << ShapeToString(tensor.shape)
                              << "] needs " << Plural(want, "value") << ", got "
                              << tensor.values.size();
  }
  return Attribute(std::move(tensor));
}

StatusOr<double> Parser::ParseDenseElement(DType dtype) {
  if (!At(TokenKind::kWord) || !LooksNumeric(tok_.text)) return Unexpected("a number");
  Token t = tok_;
  DISTIR_ASSIGN_OR_RETURN(Attribute a, ParseNumber(t));
  Advance();
  if (a.type() == AttrType::kFloat) {
    if (IsIntegral(dtype)) {
      return ErrorAt(t) << "dense<" << DTypeName(dtype) << "> values must be integers, got "
                        << t.text;
    }
    return a.AsFloat();
  }
  double v = static_cast<double>(a.AsInt());
  if (std::fabs(v) > kMaxExactInt) {
    return ErrorAt(t) << "integer " << t.text << " in a dense tensor exceeds 2^53";
  }
  return v;
}


StatusOr<Type> Parser::ParseType(int depth) {
  if (AtWord("?")) {
    Advance();
    return Type();
  }
  if (AtWord("tensor")) return ParseTensorType();
  if (AtWord("scalar")) return ParseScalarType();
  if (AtWord("tuple")) return ParseTupleType(depth);
  return Unexpected("a type");
}

StatusOr<Type> Parser::ParseTensorType() {
  Advance();
  DISTIR_RETURN_IF_ERROR(Expect(TokenKind::kLAngle, "'<'"));
  if (!At(TokenKind::kWord)) return Unexpected("a shape and dtype such as '8x16xf32'");
  std::vector<int64_t> shape;
  DType dtype = DType::kF32;
  DISTIR_RETURN_IF_ERROR(ParseShapeWord(tok_, /*allow_dynamic=*/true, "tensor type", shape, dtype));
  Advance();
  DISTIR_ASSIGN_OR_RETURN(DeviceId device, ParseOptionalDevice());
  DISTIR_RETURN_IF_ERROR(Expect(TokenKind::kRAngle, "'>'"));
  return Type::Tensor(dtype, std::move(shape), device);
}

StatusOr<Type> Parser::ParseScalarType() {
  Advance();
  DISTIR_RETURN_IF_ERROR(Expect(TokenKind::kLAngle, "'<'"));
  if (!At(TokenKind::kWord)) return Unexpected("a dtype such as 'f32'");
  std::optional<DType> dtype = ParseDType(tok_.text);
  if (!dtype.has_value()) return ErrorAt(tok_) << "unknown dtype '" << tok_.text << "'";
  Advance();
  DISTIR_ASSIGN_OR_RETURN(DeviceId device, ParseOptionalDevice());
  DISTIR_RETURN_IF_ERROR(Expect(TokenKind::kRAngle, "'>'"));
  return Type::Scalar(*dtype, device);
}

StatusOr<Type> Parser::ParseTupleType(int depth) {
  if (depth >= kMaxTypeDepth) {
    return ErrorAt(tok_) << "tuple types nest deeper than " << kMaxTypeDepth << " levels";
  }
  Advance();
  DISTIR_RETURN_IF_ERROR(Expect(TokenKind::kLAngle, "'<'"));
  std::vector<Type> elements;
  while (!At(TokenKind::kRAngle)) {
    DISTIR_ASSIGN_OR_RETURN(Type t, ParseType(depth + 1));
    elements.push_back(std::move(t));
    if (!At(TokenKind::kComma)) break;
    Advance();
  }
  DISTIR_RETURN_IF_ERROR(Expect(TokenKind::kRAngle, "'>'"));
  return Type::Tuple(std::move(elements));
}

// `, d3` before the closing '>' of a tensor or scalar type; no device otherwise.
StatusOr<DeviceId> Parser::ParseOptionalDevice() {
  if (!At(TokenKind::kComma)) return DeviceId();
  Advance();
  if (!At(TokenKind::kWord)) return Unexpected("a device such as 'd0'");
  std::optional<DeviceId> device = ParseDeviceId(tok_.text);
  if (!device.has_value()) return ErrorAt(tok_) << "bad device '" << tok_.text << "'";
  Advance();
  return *device;
}

// "8x16xf32", "?x768xf16", "f32": extents separated by 'x', then the dtype.
// Errors point at the offending part of the word.
Status Parser::ParseShapeWord(const Token& t, bool allow_dynamic, std::string_view what,
                              std::vector<int64_t>& shape, DType& dtype) const {
  std::string_view w = t.text;
  size_t start = 0;
  for (size_t x = w.find('x'); x != std::string_view::npos; x = w.find('x', start)) {
    std::string_view part = w.substr(start, x - start);
    int64_t extent = 0;
    if (allow_dynamic && part == "?") {
      extent = kDynamicDim;
    } else {
      auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), extent);
      if (!IsDigits(part) || ec != std::errc() || ptr != part.data() + part.size()) {
        return ErrorAt(t, start) << "bad extent '" << part << "' in " << what;
      }
    }
    shape.push_back(extent);
    start = x + 1;
  }
  std::string_view name = w.substr(start);
  if (name.empty()) return ErrorAt(t, start) << "expected a dtype after '" << w << "'";
  std::optional<DType> parsed = ParseDType(name);
  if (!parsed.has_value()) return ErrorAt(t, start) << "unknown dtype '" << name << "'";
  dtype = *parsed;
  return CheckTensorSize(t, shape, dtype);
}

// Sizes are int64 bytes everywhere downstream; a shape whose size overflows
// would make every later computation undefined, so it stops here.
Status Parser::CheckTensorSize(const Token& t, const std::vector<int64_t>& shape,
                               DType dtype) const {
  int64_t bytes = ByteWidth(dtype);
  for (int64_t d : shape) {
    if (d == kDynamicDim) continue;
    if (__builtin_mul_overflow(bytes, d, &bytes)) {
      return ErrorAt(t) << "tensor of shape [" << ShapeToString(shape)
                        << "] is too large: its size overflows 64 bits";
    }
  }
  return Status::Ok();
}

StatusOr<Type> Parser::ParseWholeType() {
  DISTIR_ASSIGN_OR_RETURN(Type type, ParseType(0));
  if (!At(TokenKind::kEof)) return Unexpected("end of type");
  return type;
}

StatusOr<Sharding> Parser::ParseWholeSharding() {
  if (!At(TokenKind::kLAngle)) return Unexpected("a sharding such as '<@mesh, [{dp}, {}]>'");
  DISTIR_ASSIGN_OR_RETURN(Sharding s, ParseSharding());
  if (!At(TokenKind::kEof)) return Unexpected("end of sharding");
  return s;
}

}  // namespace

StatusOr<Sharding> ParseShardingText(std::string_view text, const std::string& filename) {
  Parser parser(text, filename);
  return parser.ParseWholeSharding();
}

StatusOr<Module> ParseModule(std::string_view text, const std::string& filename) {
  Parser parser(text, filename);
  return parser.ParseWholeModule();
}

StatusOr<Type> ParseType(std::string_view text) {
  const std::string filename = "<type>";
  Parser parser(text, filename);
  return parser.ParseWholeType();
}

}  // namespace distir
