// The lexer of the DistIR text form (grammar in docs/ir.md).
//
// Splits text into tokens for parser.cc, one at a time and without copying:
// every token's text is a view into the source, which must outlive the lexer.
// Words are maximal runs of [A-Za-z0-9_.?] (with a leading '-' and an exponent
// sign allowed), so `8x16xf32`, `d0`, `-1` and `2.5e-05` are single words and
// the parser gives them meaning by context. `%name` and `@name` are tokens of
// their own. `// ...` comments and whitespace are skipped. A character that no
// token can start with, or a broken string, gives a kError token whose message
// error_message() explains; the lexer then stays at end of file.

#pragma once

#include <string>
#include <string_view>

namespace distir {

enum class TokenKind {
  kEof,
  kError,      ///< bad input; Lexer::error_message() says why
  kWord,       ///< keyword, op name, number, dtype, device, shape: `func`, `8x16xf32`, `-1`
  kValueName,  ///< `%name`; text includes the '%'
  kFuncName,   ///< `@name`; text includes the '@'
  kString,     ///< `"..."`; text includes the quotes and escapes (valid ones only)
  kLParen,
  kRParen,
  kLBrace,
  kRBrace,
  kLAngle,
  kRAngle,
  kLSquare,
  kRSquare,
  kComma,
  kEqual,
  kColon,
};

/// One token: its kind, its text (a view into the source) and 1-based position.
struct Token {
  TokenKind kind = TokenKind::kEof;
  std::string_view text;
  int line = 1;
  int col = 1;

  /// The name after the sigil of a kValueName or kFuncName token.
  std::string_view name() const { return text.substr(1); }
};

/// "'%x'", "'('", "end of file": how an error message names the token.
/// A kEof token is placed just after the last real token of the text.
/// Long texts are shortened.
std::string DescribeToken(const Token& token);

/// Decodes the escapes of a kString token's text (without the quotes).
/// REQUIRES: token.kind == TokenKind::kString.
std::string UnquoteString(const Token& token);

class Lexer {
 public:
  /// REQUIRES: `text` outlives the lexer and every token it returns.
  explicit Lexer(std::string_view text) : text_(text) {}

  /// The next token. After kEof or kError, returns kEof forever.
  Token Next();

  /// Why the last kError token was produced, e.g. "unexpected character '$'".
  const std::string& error_message() const { return error_; }

 private:
  Token Make(TokenKind kind, size_t begin, int line, int col);
  Token Error(std::string message, size_t begin, int line, int col);
  void SkipSpaceAndComments();
  void Bump();
  size_t ScanWord(size_t pos) const;
  Token LexWord(int line, int col);
  Token LexSigilName(TokenKind kind, int line, int col);
  Token LexString(int line, int col);

  std::string_view text_;
  size_t pos_ = 0;
  int line_ = 1;
  int col_ = 1;
  // Just after the last token: where end of file is reported, so that a
  // truncated file's error points at the line it stops on.
  int end_line_ = 1;
  int end_col_ = 1;
  std::string error_;
};

}  // namespace distir
