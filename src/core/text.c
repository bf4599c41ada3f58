/* text.c: text from input made safe for a terminal (text.h). */
#include "core/text.h"

#include <string.h>

/* Appends n bytes to the output, counting what would not fit. */
typedef struct {
  char *dst;
  size_t cap, len;
  int full; /* a character did not fit: nothing more goes in (no half characters) */
} out;

static void put(out *o, const char *b, size_t n) {
  if (!o->full && o->cap && o->len + n < o->cap) {
    memcpy(o->dst + o->len, b, n);
    o->dst[o->len + n] = '\0';
  } else {
    o->full = 1;
  }
  o->len += n;
}

static const char replacement[] = "\xef\xbf\xbd"; /* U+FFFD */

/* The length of the UTF-8 sequence at s (at most n bytes) and its code point, or 0 when the
 * bytes are not one (a stray continuation byte, an overlong form, a surrogate, beyond
 * U+10FFFF, or cut short: *cut then says the text ended inside it). */
static size_t decode(const unsigned char *s, size_t n, unsigned *cp, int *cut) {
  *cut = 0;
  unsigned c = s[0];
  size_t need;
  unsigned min;
  if (c < 0x80) {
    *cp = c;
    return 1;
  } else if (c >= 0xC2 && c <= 0xDF) {
    need = 2, min = 0x80, c &= 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    need = 3, min = 0x800, c &= 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    need = 4, min = 0x10000, c &= 0x07;
  } else {
    return 0;
  }
  for (size_t i = 1; i < need; i++) {
    if (i >= n) {
      *cut = 1;
      return 0;
    }
    if ((s[i] & 0xC0) != 0x80) return 0;
    c = (c << 6) | (s[i] & 0x3F);
  }
  if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;
  *cp = c;
  return need;
}

/* Characters a terminal obeys or that reorder what it shows. */
static int hidden(unsigned cp) {
  return (cp >= 0x80 && cp <= 0x9F) || (cp >= 0x202A && cp <= 0x202E) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

size_t ns_text_sanitize(char *dst, size_t cap, const char *s, size_t len, unsigned flags) {
  out o = {dst, cap, 0, 0};
  if (dst && cap) dst[0] = '\0';
  const unsigned char *p = (const unsigned char *)s;
  size_t i = 0;
  while (i < len) {
    unsigned c = p[i];
    if (c < 0x20 || c == 0x7F) {
      if ((c == '\n' && (flags & NS_TEXT_KEEP_NL)) || (c == '\t' && (flags & NS_TEXT_KEEP_TAB)) ||
          (c == '\r' && (flags & NS_TEXT_KEEP_CR))) {
        put(&o, (const char *)p + i, 1);
      } else {
        char caret[2] = {'^', c == 0x7F ? '?' : (char)(c + 0x40)};
        put(&o, caret, 2);
      }
      i++;
      continue;
    }
    if (c < 0x80) { /* a run of plain ASCII at once */
      size_t j = i;
      while (j < len && p[j] >= 0x20 && p[j] < 0x7F) j++;
      put(&o, (const char *)p + i, j - i);
      i = j;
      continue;
    }
    unsigned cp;
    int cut;
    size_t n = decode(p + i, len - i, &cp, &cut);
    if (n == 0 || hidden(cp)) {
      put(&o, replacement, 3);
      i += n ? n : 1;
    } else {
      put(&o, (const char *)p + i, n);
      i += n;
    }
  }
  return o.len;
}

size_t ns_text_partial(const char *s, size_t len) {
  const unsigned char *p = (const unsigned char *)s;
  for (size_t back = 1; back <= 3 && back <= len; back++) {
    unsigned c = p[len - back];
    if ((c & 0xC0) == 0x80) continue; /* a continuation byte: look further back */
    unsigned cp;
    int cut;
    if (c >= 0xC2 && decode(p + len - back, back, &cp, &cut) == 0 && cut) return back;
    return 0;
  }
  return 0;
}

int ns_text_is_safe(const char *s, size_t len, unsigned flags) {
  const unsigned char *p = (const unsigned char *)s;
  size_t i = 0;
  while (i < len) {
    unsigned c = p[i];
    if (c >= 0x20 && c < 0x7F) {
      i++;
      continue;
    }
    if (c < 0x20 || c == 0x7F) {
      if ((c == '\n' && (flags & NS_TEXT_KEEP_NL)) || (c == '\t' && (flags & NS_TEXT_KEEP_TAB)) ||
          (c == '\r' && (flags & NS_TEXT_KEEP_CR))) {
        i++;
        continue;
      }
      return 0;
    }
    unsigned cp;
    int cut;
    size_t n = decode(p + i, len - i, &cp, &cut);
    if (n == 0 || hidden(cp)) return 0;
    i += n;
  }
  return 1;
}
