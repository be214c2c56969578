#include "ir/lexer.h"

#include <cstdio>

namespace distir {
namespace {

bool IsWordChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '?';
}

bool IsNameChar(char c) { return IsWordChar(c) && c != '?'; }

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// The kind of a one-character token, or kEof for any other character.
TokenKind PunctuationKind(char c) {
  constexpr std::string_view kChars = "(){}<>[],=:";
  constexpr TokenKind kKinds[] = {TokenKind::kLParen,  TokenKind::kRParen,  TokenKind::kLBrace,
                                  TokenKind::kRBrace,  TokenKind::kLAngle,  TokenKind::kRAngle,
                                  TokenKind::kLSquare, TokenKind::kRSquare, TokenKind::kComma,
                                  TokenKind::kEqual,   TokenKind::kColon};
  size_t i = kChars.find(c);
  return i == std::string_view::npos ? TokenKind::kEof : kKinds[i];
}

// A character in a message: printable ASCII as itself, anything else as \xNN,
// so a binary file never puts raw bytes on the terminal.
std::string ShowChar(char c) {
  if (c >= 0x20 && c < 0x7f) return std::string(1, c);
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(c));
  return buf;
}

}  // namespace

std::string DescribeToken(const Token& token) {
  if (token.kind == TokenKind::kEof) return "end of file";
  constexpr size_t kMaxShown = 40;
  std::string_view text = token.text.substr(0, kMaxShown);
  std::string shown;
  for (char c : text) shown += ShowChar(c);
  if (token.text.size() > kMaxShown) shown += "...";
  return "'" + shown + "'";
}

std::string UnquoteString(const Token& token) {
  std::string out;
  std::string_view body = token.text.substr(1, token.text.size() - 2);
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i] != '\\' || i + 1 == body.size()) {
      out += body[i];
      continue;
    }
    char e = body[++i];
    out += e == 'n' ? '\n' : e == 't' ? '\t' : e;
  }
  return out;
}

Token Lexer::Make(TokenKind kind, size_t begin, int line, int col) {
  end_line_ = line_;
  end_col_ = col_;
  return Token{kind, text_.substr(begin, pos_ - begin), line, col};
}

Token Lexer::Error(std::string message, size_t begin, int line, int col) {
  error_ = std::move(message);
  Token t{TokenKind::kError, text_.substr(begin, 1), line, col};
  pos_ = text_.size();  // every later call returns end of file
  return t;
}

void Lexer::Bump() {
  if (text_[pos_] == '\n') {
    ++line_;
    col_ = 1;
  } else {
    ++col_;
  }
  ++pos_;
}

void Lexer::SkipSpaceAndComments() {
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      Bump();
      continue;
    }
    if (c != '/' || pos_ + 1 >= text_.size() || text_[pos_ + 1] != '/') return;
    while (pos_ < text_.size() && text_[pos_] != '\n') Bump();
  }
}

// End of the word starting at `pos`. A sign directly after the 'e' of a
// number's exponent (2.5e-05) belongs to the word.
size_t Lexer::ScanWord(size_t pos) const {
  size_t begin = pos;
  if (pos < text_.size() && text_[pos] == '-') ++pos;
  bool numeric = pos < text_.size() && IsDigit(text_[pos]);
  while (pos < text_.size()) {
    char c = text_[pos];
    if (IsWordChar(c)) {
      ++pos;
      continue;
    }
    bool exponent_sign = numeric && (c == '-' || c == '+') && pos > begin &&
                         (text_[pos - 1] == 'e' || text_[pos - 1] == 'E') &&
                         pos + 1 < text_.size() && IsDigit(text_[pos + 1]);
    if (!exponent_sign) break;
    ++pos;
  }
  return pos;
}

Token Lexer::LexWord(int line, int col) {
  size_t begin = pos_;
  size_t end = ScanWord(pos_);
  col_ += static_cast<int>(end - pos_);
  pos_ = end;
  return Make(TokenKind::kWord, begin, line, col);
}

Token Lexer::LexSigilName(TokenKind kind, int line, int col) {
  size_t begin = pos_;
  Bump();
  size_t end = pos_;
  while (end < text_.size() && IsNameChar(text_[end])) ++end;
  if (end == pos_) {
    return Error("expected a name after '" + std::string(1, text_[begin]) + "'", begin, line, col);
  }
  col_ += static_cast<int>(end - pos_);
  pos_ = end;
  return Make(kind, begin, line, col);
}

Token Lexer::LexString(int line, int col) {
  size_t begin = pos_;
  Bump();
  while (pos_ < text_.size() && text_[pos_] != '"' && text_[pos_] != '\n') {
    if (text_[pos_] != '\\') {
      Bump();
      continue;
    }
    char e = pos_ + 1 < text_.size() ? text_[pos_ + 1] : '\0';
    if (e != '"' && e != '\\' && e != 'n' && e != 't') {
      return Error("unknown escape '\\" + ShowChar(e) + "' in string literal", pos_, line_, col_);
    }
    Bump();
    Bump();
  }
  if (pos_ >= text_.size() || text_[pos_] != '"') {
    return Error("unterminated string literal", begin, line, col);
  }
  Bump();
  return Make(TokenKind::kString, begin, line, col);
}

Token Lexer::Next() {
  SkipSpaceAndComments();
  int line = line_;
  int col = col_;
  if (pos_ >= text_.size()) return Token{TokenKind::kEof, {}, end_line_, end_col_};
  char c = text_[pos_];
  if (c == '%') return LexSigilName(TokenKind::kValueName, line, col);
  if (c == '@') return LexSigilName(TokenKind::kFuncName, line, col);
  if (c == '"') return LexString(line, col);
  TokenKind punct = PunctuationKind(c);
  if (punct != TokenKind::kEof) {
    size_t begin = pos_;
    Bump();
    return Make(punct, begin, line, col);
  }
  bool starts_word =
      IsWordChar(c) || (c == '-' && pos_ + 1 < text_.size() && IsWordChar(text_[pos_ + 1]));
  if (starts_word) return LexWord(line, col);
  return Error("unexpected character '" + ShowChar(c) + "'", pos_, line, col);
}

}  // namespace distir
