import FuzzSupport
import RulesFuzzing

// Whole rules files: the lexer, parser, checker and type warnings, then evaluation.
fuzz { bytes in compileAndDecide(String(decoding: bytes, as: UTF8.self)) }
