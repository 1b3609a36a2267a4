@testable import FlintRules
import Testing

/// Every compile-time message, each from a ruleset that triggers it, with where it points.
private func wrap(_ body: String, version: String = "2") -> String {
    "rules_version = '\(version)';\nservice cloud.firestore {\n  match /databases/{db}/documents {\n\(body)\n  }\n}\n"
}

private let cases: [(source: String, expected: String)] = [
    // Lexer
    (wrap("    /* never closed"), "4:5: error: Unterminated comment: with no '*/' after it, '/*' starts a path."),
    (wrap("    match /a/{b} { allow read: if 1 # 2; }"), "4:37: error: Unexpected character '#'."),
    (wrap("    match /a/{b} { allow read: if 99999999999999999999 > 1; }"), "4:35: error: Invalid number literal 99999999999999999999."),
    (wrap("    match /a/{b} { allow read: if 'open\n; }"), "4:35: error: Unterminated string literal."),
    (wrap("    match /a/{b} { allow read: if '\\u12' == 'x'; }"), "4:37: error: Invalid \\u escape: four hex digits expected."),
    (wrap("    match /a/{b} { allow read: if '\\d' == 'x'; }"), "4:37: error: Invalid escape sequence '\\d'."),
    (wrap("    match /a/{b} { allow read: if b'\\x4' == b''; }"), "4:38: error: Invalid \\x escape: two hex digits expected."),
    (wrap("    match /a/{b} { allow read: if b'\\01' == b''; }"), "4:38: error: Invalid octal escape: three octal digits up to \\377 expected."),
    (wrap("    match /a/{b} { allow read: if '\\400' == ''; }"), "4:37: error: Invalid octal escape: three octal digits up to \\377 expected."),
    (wrap("    match /a/{b} { allow read: if '\\a' == ''; }"), "4:37: error: Invalid escape sequence '\\a'."),
    (wrap("    match /a/{b} { allow read: if let; }"), "4:35: error: Unexpected 'let': it is a reserved word."),
    (wrap("    match /a/{b} { allow read: if each.x == 1; }"), "4:35: error: Unexpected 'each': it is a reserved word."),
    (wrap("    function default() { return true; }"), "4:14: error: Unexpected 'default': it is a reserved word."),
    (wrap("    function f(arguments) { return true; }"), "4:16: error: Unexpected 'arguments': it is a reserved word."),
    (wrap("    function f() { let deny = 1; return true; }"), "4:24: error: Unexpected 'deny': it is a reserved word."),
    (wrap("    match /a/{match} { allow read: if true; }"), "4:15: error: Unexpected 'match': it is a reserved word."),
    (wrap("    match /a/{b} { allow read: if request.auth.do() == 1; }"), "4:50: error: Unexpected '(': 'do' is a reserved word and names no method."),
    (wrap("    match /a/{b} { allow read: if resource.data.service == 1; }"), "4:49: error: Unexpected 'service': it is a reserved word."),
    (wrap("    match /a/{null} { allow read: if true; }"), "4:15: error: Unexpected 'null': it is a reserved word."),
    (wrap("    match /a/{b=* *} { allow read: if true; }"), "4:19: error: Expected '}' to close the wildcard."),
    (wrap("    match /a/{b=} { allow read: if true; }"), "4:17: error: Expected '*' or '**' after '='."),
    (wrap("    match /a/{b} { allow read: if (/c/{d}/{d}) != null; }"), "4:44: error: Variable d already exists in the PathTemplate."),
    (wrap("    match /a/{b} { allow read: if $ == 1; }"), "4:35: error: Unexpected character '$'."),
    ("\u{FEFF}" + wrap("    match /a/{b} { allow read: if true; }"), "1:1: error: Unexpected character U+FEFF (a byte order mark)."),
    (wrap("    match /a/{b} { allow read: if\u{A0}true; }"), "4:34: error: Unexpected character U+00A0."),
    (wrap("    function f(math) { return true; }"), "4:16: error: math is a package and cannot be used as variable name."),
    (wrap("    match /a/{timestamp} { allow read: if true; }"), "4:15: error: timestamp is a package and cannot be used as variable name."),
    (wrap("    function f(a, ) { return true; }"), "4:19: error: Expected a parameter name after ','."),
    (wrap("    match /a/{b} { allow , write: if true; }"), "4:26: error: Expected a method (read, write, get, list, create, update, delete)."),
    (wrap("    match /a/{b} { allow true: if true; }"), "4:26: error: Expected a method (read, write, get, list, create, update, delete)."),
    (wrap("    match /a/{b} { allow read, in: if true; }"), "4:32: error: Expected a method (read, write, get, list, create, update, delete)."),
    (wrap("    match /a/{b} { allow read: if /* open"), "4:35: error: Unterminated comment: with no '*/' after it, '/*' starts a path."),
    (wrap("    match /a/{b} { }"), "4:20: error: The 'match' body must contain at least one declaration."),
    (wrap("    function f(x, x) { return x; }"), "4:19: error: Variable x is already defined."),
    (wrap("    match /a/{b} { allow read: if math == 1; }"), "4:35: error: math is a package and cannot be used as variable name."),
    (wrap("    match /a/{b} { allow read: if --1 == 1; }"), "4:37: error: Increment (++) and decrement (--) operators are not supported."),
    (wrap("    match /a/{b} { allow read: if 1--1 == 2; }"), "4:38: error: Increment (++) and decrement (--) operators are not supported."),
    (wrap("    match /a/{b} { allow read: if x++; }"), "4:38: error: Increment (++) and decrement (--) operators are not supported."),
    (wrap("    match /a/{b} { allow read: if - -1 == 1; }"), "4:37: error: Unexpected '-'."),
    (wrap("    match /a/{b} { allow read: if -!true; }"), "4:36: error: Unexpected '!'."),
    (wrap("    match /a/{b} { allow read: if 4/2 == 2; }"),
     "4:36: error: Division needs a space after '/': Firestore reads '/' followed directly by a name, a number or '(' as the start of a path."),
    (wrap("    match /a/{b} { allow read: if (4) /(2) == 2; }"),
     "4:39: error: Division needs a space after '/': Firestore reads '/' followed directly by a name, a number or '(' as the start of a path."),
    (wrap("    match /a/{b} { allow read: if 4/{x} == 2; }"),
     "4:36: error: '$(' and '{' go only in paths: Firestore reads the '/' before them as the start of a path, not a division."),
    (wrap("    match /a/{b} { allow read: if 4 / $ (b) == 2; }"),
     "4:37: error: '$(' and '{' go only in paths: Firestore reads the '/' before them as the start of a path, not a division."),
    (wrap("    match /a/{b} { allow read: if b'\\u0041' == b''; }"), "4:38: error: Invalid escape sequence '\\u'."),
    (wrap("    match /a/{b} { allow read: if b'abc\n == b''; }"), "4:35: error: Unterminated bytes literal."),
    // File structure
    ("rules_version = 2;\nservice cloud.firestore {}", "1:17: error: mismatched input '2' expecting STRING"),
    ("rules_version = '3';\nservice cloud.firestore {}", "1:1: error: Unsupported rules version 3."),
    ("service cloud.firestore { match /a { allow read; } }\nservice cloud.firestore { match /a { allow read; } }", "2:9: error: Duplicate service name declaration."),
    ("service cloud.firestore {}\nrules_version = '2';", "2:1: error: Unexpected 'rules_version': it must come first."),
    ("match /a {}", "1:1: error: Expected 'service' or 'function'."),
    ("", "0:0: error: Rules content empty. Compilation aborted."),
    ("// nothing\n", "2:1: error: A ruleset needs a 'service cloud.firestore { ... }' block."),
    // Another service loads, and its methods are no methods; `_` is no part of a service's name.
    ("service cloud.firestorm { match /a { allow read; } }", "1:9: warning: Invalid service name: cloud.firestorm."),
    ("service cloud.firestorm { match /a { allow read; } }", "1:44: warning: Invalid method name: read."),
    ("service cloud_firestore { match /a { allow read; } }", "1:14: error: Expected '{'."),
    ("service _x { match /a { allow read; } }", "1:9: error: Expected a service name."),
    ("service /* c */ cloud.firestore { match /a { allow read; } }", "1:9: error: Expected a service name."),
    ("service cloud.firestore { allow read; }", "1:27: error: Expected 'match' or 'function' in a service."),
    ("service cloud.firestore { match /a/{b} { allow read; }", "1:55: error: Expected '}' to close the service."),
    (wrap("    match /a/{b} allow read;"), "4:18: error: Expected '{' after the match pattern."),
    (wrap("    match /a/{b} { return true; }"), "4:20: error: Expected 'allow', 'match' or 'function'."),
    (wrap("    match a/{b} { allow read; }"), "4:11: error: A match pattern starts with '/'."),
    (wrap("    match /a/{1} { allow read; }"), "4:15: error: Expected a wildcard name."),
    (wrap("    match /a/{b { allow read; }"), "4:17: error: Expected '}' to close the wildcard."),
    (wrap("    match /a/, { allow read; }"), "4:14: error: Expected a path segment."),
    (wrap("    match /a/{b} { allow 1; }"), "4:26: error: Expected a method (read, write, get, list, create, update, delete)."),
    (wrap("    match /a/{b} { allow view; }"), "4:26: warning: Invalid method name: view."),
    (wrap("    match /a/{b} { allow read: true; }"), "4:32: error: Missing 'if' before conditional expression."),
    (wrap("    match /a/{b} { allow read if true; }"), "4:31: error: Expected ':' before 'if'."),
    (wrap("    function (x) { return true; }"), "4:14: error: Expected a function name."),
    (wrap("    function f() { let x = 1 return x; }"), "4:30: error: Let assignments must end with ';'."),
    (wrap("    function f() { true; }"), "4:20: error: A function body needs 'return'."),
    (wrap("    function f() { return true; true }"), "4:33: error: Expected '}' to close the function."),
    // Expressions
    (wrap("    match /a/{b} { allow read: if true ? 1; }"), "4:43: error: Expected ':' in a conditional expression."),
    (wrap("    match /a/{b} { allow read: if 1 is 2; }"), "4:40: error: Expected a type name after 'is'."),
    (wrap("    match /a/{b} { allow read: if request.'a'; }"), "4:43: error: Expected a field or method name after '.'."),
    // `.1` is a number, as on the reference emulator; after a complete condition it is quoted as written.
    (wrap("    match /a/{b} { allow read: if request.1; }"), "4:42: error: Unexpected '.1'."),
    (wrap("    match /a/{b} { allow read: if 1e3 == 1000; }"), "4:36: error: Unexpected 'e3'."),
    (wrap("    match /a/{b} { allow read: if 007 == 7; }"), "4:36: error: Unexpected '0'."),
    (wrap("    match /a/{b} { allow read: if 1.size() == 1; }"), "4:37: error: Unexpected 'size'."),
    (wrap("    match /a/{b} { allow read: if f(1; }"), "4:38: error: Expected ')' after the arguments."),
    (wrap("    match /a/{b} { allow read: if (1 == 1; }"), "4:42: error: Expected ')'."),
    (wrap("    match /a/{b} { allow read: if [1, 2 == 1; }"), "4:45: error: Expected ']' to close the list."),
    (wrap("    match /a/{b} { allow read: if {'a' 1} == {}; }"), "4:40: error: Expected ':' after a map key."),
    (wrap("    match /a/{b} { allow read: if {'a': 1 == {}; }"), "4:48: error: Expected '}' to close the map."),
    ("service cloud.firestore { match /a/{b} { allow read: if", "1:56: error: Unexpected end of the ruleset."),
    (wrap("    match /a/{b} { allow read: if ); }"), "4:35: error: Unexpected token in an expression."),
    (wrap("    match /a/{b} { allow read: if exists(/a/$(b ; }"), "4:49: error: Expected ')' to close '$('."),
    // A `$` parted from its `(` by spaces still opens an interpolation; a `$` before anything else is no name.
    (wrap("    match /a/{b} { allow read: if exists(/a/$ (b ; }"), "4:50: error: Expected ')' to close '$('."),
    (wrap("    match /a/{b} { allow read: if exists(/a/$ b); }"), "4:45: error: Unexpected character '$'."),
    // Checks
    (wrap("    match /a/{rest=**}/b/{c} { allow read; }", version: "1"), "4:5: error: A recursive wildcard {name=**} must be the last segment of a match in rules_version 1."),
    (wrap("    match /{x=**}/a/{y=**} { allow read; }"), "4:5: error: A match pattern may hold at most one recursive wildcard."),
    (wrap("    match /a/{b}/c/{b} { allow read; }"), "4:21: error: Variable b already exists in the PathTemplate."),
    (wrap("    function f() { return true; }\n    function f() { return false; }"), "5:14: error: Function f is already defined."),
    (wrap("    function f(a, b, c, d, e, f, g, h) { return true; }"), "4:14: error: Maximum allowed function arguments of 7 for function f is reached."),
    (wrap("    function f() { " + (0..<11).map { "let v\($0) = 1; " }.joined() + "return true; }"), "4:5: error: Function f has 11 let bindings; at most 10 are allowed."),
    (wrap("    function f() { let x = 1; return x == 1; }", version: "1"), "4:5: error: let bindings need rules_version = '2'."),
    // Recursion, as the reference words and places it (each case checked there).
    (wrap("    function f(x) { return f(x); }"), "4:14: error: Recursive call is not allowed."),
    (wrap("    function f(x) { let y = f(x); return y; }"), "4:14: error: Recursive call is not allowed."),
    (wrap("    function g(x) { return f(x); }\n    function f(x) { return g(x); }"), "4:14: error: Detected a call cycle between [g,f] functions."),
    (wrap("    function a(x) { return c(x); }\n    function b(x) { return a(x); }\n    function c(x) { return b(x); }"),
     "4:14: error: Detected a call cycle between [a,c,b] functions."),
    (wrap("    function x(v) { return a(v); }\n    function a(v) { return b(v); }\n    function b(v) { return a(v); }"),
     "5:14: error: Detected a call cycle between [a,b] functions."),
    (wrap("    function a(v) { return b(v); }\n    function b(v) { return c(v) && a(v); }\n    function c(v) { return b(v); }"),
     "5:14: error: Detected a call cycle between [b,c] functions."),
    (wrap("    function a(v) { return b(v); }\n    function b(v) { return c(v) && a(v); }\n    function c(v) { return b(v); }"),
     "4:14: error: Detected a call cycle between [a,b] functions."),
    (wrap("    function a(v) { return b(v) && a(v); }\n    function b(v) { return a(v); }"), "4:14: error: Recursive call is not allowed."),
    (wrap("    match /c/{d} { function f(x) { return g(x); } function g(x) { return f(x); } allow read: if f(1); }"),
     "4:29: error: Detected a call cycle between [f,g] functions."),
    // A let naming a binding again.
    (wrap("    function f(x) { let x = x + 1; return x == 2; }"), "4:25: error: The identifier [x] is already bound in the current scope."),
    (wrap("    function f() { let x = 1; let x = 2; return x == 1; }"), "4:35: error: The identifier [x] is already bound in the current scope."),
    (wrap("    function f() { let x = 1; let x = 2; return x == 1; }"), "4:24: warning: Unused variable: x."),
    (wrap("    function f(x) { let x = 1; return x; }"), "4:16: warning: Unused variable: x."),
    (wrap("    match /a/{b} { allow read: if 1 is bogus; }"), "4:45: error: An unsupported type identifier was used with the 'is' operator. Received bogus. Expected one of bool,bytes,constraint,duration,float,int,latlng,list,vector,set,number,map,string,timestamp,path,map_diff"),
    (wrap("    match /a/{b} { allow read: if 1 is null; }"), "4:40: error: mismatched input 'null' expecting IDENTIFIER"),
    (wrap("    match /a/{b} { allow read: if b.matches('a\\\\1'); }"), "4:45: error: Invalid regular expression 'a\\1': invalid escape sequence: backreferences are not supported (\\1)."),
    // A backspace, form feed or carriage return stands in quotes only as its escape.
    (wrap("    match /a/{b} { allow read: if 'a\u{08}b' == b; }"), "4:37: error: U+0008 cannot stand in a quoted literal; write \\b."),
    (wrap("    match /a/{b} { allow read: if b'a\u{0C}' == b; }"), "4:38: error: U+000C cannot stand in a quoted literal; write \\f."),
    (wrap("    match /a/{b} { allow read: if \"\r\" == b; }"), "4:36: error: U+000D cannot stand in a quoted literal; write \\r."),
    // A named class runs to the first `:]`, even past a `]` or sharing the colon of `[:`.
    (wrap("    match /a/{b} { allow read: if b.matches('[a)]'); }"), "4:45: error: Invalid regular expression '[a)]': unexpected ): a parenthesis in brackets or \\Q…\\E counts too; escape it."),
    (wrap("    match /a/{b} { allow read: if b.matches('\\\\Q(\\\\E'); }"), "4:45: error: Invalid regular expression '\\Q(\\E': missing closing ): a parenthesis in brackets or \\Q…\\E counts too; escape it."),
    (wrap("    match /a/{b} { allow read: if b.matches('[[:]]'); }"), "4:45: error: Invalid regular expression '[[:]]': invalid character class range: [:]."),
    (wrap("    match /a/{b} { allow read: if b.matches('[[:a]x:]'); }"), "4:45: error: Invalid regular expression '[[:a]x:]': invalid character class range: [:a]x:]."),
    (wrap("    match /a/{b} { allow read: if b.matches('[[:^foo:]]'); }"), "4:45: error: Invalid regular expression '[[:^foo:]]': invalid character class range: [:^foo:]."),
    (wrap(String(repeating: "    match /a/{b} {\n", count: 11) + "      allow read;\n" + String(repeating: "    }\n", count: 11)), "14:5: error: Too many nested match blocks (at most 10)."),
    // Types known from the source alone: warnings, at the positions the reference gives.
    (wrap("    match /q/{d=**} { allow read: if d == 'x'; }"), "4:40: warning: The sub-expressions are not comparable, so this comparison will always return false."),
    (wrap("    match /q/{id} { allow read: if id != 1; }"), "4:39: warning: The sub-expressions are not comparable, so this comparison will always return true."),
    (wrap("    match /q/{id} { allow read: if true && (null ==\n 1); }"), "4:50: warning: The sub-expressions are not comparable, so this comparison will always return false."),
    (wrap("    match /q/{id} {\n      match /r/{d=**} { allow read: if [id] == d; }\n    }"), "5:45: warning: The sub-expressions are not comparable, so this comparison will always return false."),
    (wrap("    function f(x) { return x == 1 || 'a' == true; }\n    match /q/{id} { allow read: if f(id); }"), "4:42: warning: The sub-expressions are not comparable, so this comparison will always return false."),
    (wrap("    match /q/{id} { allow read: if 'a' in 1; }"), "4:43: warning: Invalid type. Received one of [int]. Expected one of [list, set, map, constraint]."),
    (wrap("    match /q/{id} { allow read: if -id == 1; }"), "4:37: warning: Invalid type. Received one of [string]. Expected one of [int, float, duration]."),
    (wrap("    match /q/{id} { allow read: if -id == 1; }"), "4:37: warning: Invalid type. There is no type for variable 'id' that satisfies all clauses."),
    // Types worked out through operators, calls and functions (checked against the reference).
    (wrap("    match /q/{id} { allow read: if 1 != null; }"), "4:38: warning: The sub-expressions are not comparable, so this comparison will always return true."),
    (wrap("    match /q/{id} { allow read: if 'a'.size(); }"), "4:40: warning: Invalid type. Permission statements expect a boolean value. Received one of [int]."),
    (wrap("    match /q/{id} { allow read: if 'x' + 'y'; }"), "4:40: warning: Invalid type. Permission statements expect a boolean value. Received one of [int, float, string, duration, timestamp]."),
    (wrap("    match /q/{id} { allow read: if true ? 1 : 2; }"), "4:43: warning: Invalid type. Received one of [int]. Expected one of [bool]."),
    (wrap("    match /q/{id} { allow read: if (true ? 1 : 'a') == 1; }"), "4:42: warning: Ternary operator result if condition is true has a different type than if condition is false."),
    (wrap("    match /q/{id} { allow read: if 'a'.matches(1); }"), "4:48: warning: Invalid type. Received one of [int]. Expected one of [string]."),
    (wrap("    match /q/{id} { allow read: if [1].hasAll(id); }"), "4:47: warning: Invalid type. Received one of [string]. Expected one of [list, set]."),
    (wrap("    match /q/{id} { allow read: if 'a' * 2 == 1; }"), "4:36: warning: Invalid type. Received one of [string]. Expected one of [int, float]."),
    (wrap("    match /q/{id} { allow read: if math.floor(1.5) == 'x'; }"), "4:52: warning: The sub-expressions are not comparable, so this comparison will always return false."),
    (wrap("    function f() { return 1; }\n    function g() { return f(); }\n    match /q/{id} { allow read: if g() == 'x'; }"),
     "6:40: warning: The sub-expressions are not comparable, so this comparison will always return false."),
    // Library functions' arguments, and the number of arguments of functions and methods.
    (wrap("    match /a/{b} { allow read: if math.abs('a') == 1; }"), "4:44: warning: Invalid type. Received one of [string]. Expected one of [int, float]."),
    (wrap("    match /a/{b} { allow read: if latlng.value('a', 1) == request.y; }"), "4:48: warning: Invalid type. Received one of [string]. Expected one of [float, int]."),
    (wrap("    match /a/{b} { allow read: if exists(1); }"), "4:42: warning: Invalid type. Received one of [int]. Expected one of [path]."),
    (wrap("    match /a/{b} { allow read: if 'a'.split() == request.y; }"), "4:39: warning: Incorrect number of arguments supplied to function: split."),
    (wrap("    match /a/{b} { allow read: if math.abs() == request.y; }"), "4:40: warning: Incorrect number of arguments supplied to function: math.abs."),
    (wrap("    match /a/{b} { allow read: if debug() == request.y; }"), "4:35: warning: Incorrect number of arguments supplied to function: debug."),
    // `-` gives a number or a duration, whatever it is given.
    (wrap("    match /a/{b} { allow read: if -request.x == 'a'; }"), "4:46: warning: The sub-expressions are not comparable, so this comparison will always return false."),
    // A ternary's branches of different types, where both are what the place expects.
    (wrap("    match /a/{b} { allow read: if ((true ? 1 : 'a') + 1) == request.y; }"),
     "4:42: warning: Ternary operator result if condition is true has a different type than if condition is false."),
    // A function no condition reaches is checked without a request.
    (wrap("    function f() { return request.auth != null; }"), "4:27: warning: Invalid variable name: request."),
    (wrap("    function f() { return exists(/databases/x/documents/a/b); }"), "4:27: warning: Invalid function name: exists."),
]

struct DiagnosticTests {
    @Test(arguments: cases.indices) func eachMessageAtItsPosition(_ i: Int) {
        let (source, expected) = cases[i]
        let found = Ruleset.compile(source).diagnostics.map(\.description)
        #expect(found.contains(expected), "\(expected) not in \(found)")
    }

    /// A type warning on a path literal spans its slash and first segment as written, so an
    /// escape counts three characters (the reference's 111–115 for this line's `/a%41`).
    @Test func aPathWarningSpansItsFirstSegmentAsWritten() throws {
        let source = "rules_version = '2';\nservice cloud.firestore { match /databases/{db}/documents {\nmatch /a/{b} { allow read: if /a%41/b; }\n} }"
        let warning = try #require(Ruleset.compile(source).diagnostics.first { $0.severity == .warning })
        #expect(warning.message == "Invalid type. Permission statements expect a boolean value. Received one of [path].")
        #expect(warning.position.offset == 111)
        #expect(warning.endOffset == 115)
    }

    /// Every error of a ruleset whose functions call each other, exactly as the reference
    /// listed them: each cycle once, found from the first function declared, and a call
    /// resolved only where its function can see the callee.
    @Test func callCyclesAreFoundOnceEach() {
        let cases: [(functions: String, errors: [String])] = [
            ("    function a(v) { return b(v); }\n    function b(v) { return a(v); }\n    function c(v) { return d(v); }\n    function d(v) { return c(v); }",
             ["4:14: error: Detected a call cycle between [a,b] functions.", "6:14: error: Detected a call cycle between [c,d] functions."]),
            ("    function a(v) { return b(v) && c(v); }\n    function b(v) { return a(v); }\n    function c(v) { return a(v); }",
             ["4:14: error: Detected a call cycle between [a,b] functions.", "4:14: error: Detected a call cycle between [a,c] functions."]),
            ("    function a(v) { return b(v) && a(v); }\n    function b(v) { return a(v); }",
             ["4:14: error: Detected a call cycle between [a,b] functions.", "4:14: error: Recursive call is not allowed."]),
            ("    function a(v) { return b(v) && b(v); }\n    function b(v) { return a(v); }", ["4:14: error: Detected a call cycle between [a,b] functions."]),
            ("    function a(x) { return a(x); }\n    function b(x) { return b(x); }",
             ["4:14: error: Recursive call is not allowed.", "5:14: error: Recursive call is not allowed."]),
            // `b` is declared inside the match: the service-level `a` cannot call it.
            ("    function a(v) { return b(v); }\n    match /c/{d} { function b(v) { return a(v); } allow read: if a(1) && b(1); }", []),
        ]
        for (functions, errors) in cases {
            let found = Ruleset.compile(wrap(functions)).diagnostics.filter { $0.severity == .error }.map(\.description)
            #expect(found == errors, "\(functions)")
        }
    }

    /// Every warning of a condition, exactly as the reference listed it: receivers, members,
    /// indexes and slices held to what has them, an operator's operands narrowed to what its
    /// place expects, the parts of an expression already named checked for themselves only,
    /// and branches of overlapping types not told apart.
    @Test func typesAreWorkedOutAsTheReferenceWorksThemOut() {
        let cases: [(condition: String, warnings: [String])] = [
            ("(1).size() == request.y", ["4:36: warning: Invalid type. Received one of [int]. Expected one of [string, bytes, list, set, map]."]),
            ("'a'.x == request.y", ["4:35: warning: Invalid type. Received one of [string]. Expected one of [map]."]),
            ("'a'[0]", ["4:35: warning: Invalid type. Received one of [string]. Expected one of [list, map, path]."]),
            ("(1 + true).size() == 1", [
                "4:36: warning: Invalid type. Received one of [int]. Expected one of [string].",
                "4:40: warning: Invalid type. Received one of [bool]. Expected one of [string].",
            ]),
            ("[(1), true + request.time]", [
                "4:35: warning: Invalid type. Permission statements expect a boolean value. Received one of [list].",
                "4:41: warning: Invalid type. Received one of [bool]. Expected one of [int, float, string, duration, timestamp].",
            ]),
            ("math.isNaN('a' != true)", ["4:50: warning: Invalid type. Received one of [bool]. Expected one of [float, int]."]),
            ("(true ? -1 : 1) == request.y", []),
            ("duration.value(1, 's')[0:1]", ["4:35: warning: Invalid type. Permission statements expect a boolean value. Received one of [string, list, path]."]),
            ("-1['a']", [
                "4:35: warning: Invalid type. Permission statements expect a boolean value. Received one of [int, float, duration].",
                "4:36: warning: Invalid type. Received one of [int]. Expected one of [string, list, map, path].",
            ]),
            ("math.ceil(1)", ["4:40: warning: Invalid type. Permission statements expect a boolean value. Received one of [float]."]),
            // A sign's operand must give what the sign's place expects, named inside one pair of
            // parentheses; `-1` is a sign applied to `1`.
            ("(-1).nanos() == 1", ["4:37: warning: Invalid type. Received one of [int]. Expected one of [duration]."]),
            ("(- 1).nanos() == 1", ["4:38: warning: Invalid type. Received one of [int]. Expected one of [duration]."]),
            ("(-(1)).nanos() == 1", ["4:38: warning: Invalid type. Received one of [int]. Expected one of [duration]."]),
            ("duration.abs(-(-1)) == 1", [
                "4:51: warning: Invalid type. Received one of [int]. Expected one of [duration].",
                "4:55: warning: The sub-expressions are not comparable, so this comparison will always return false.",
            ]),
            ("timestamp.date(-true, 1, 1) == 1", [
                "4:51: warning: Invalid type. Received one of [bool]. Expected one of [int, float].",
                "4:63: warning: The sub-expressions are not comparable, so this comparison will always return false.",
            ]),
            // An operand must be what some form of its operator giving the place's type takes:
            // a timestamp comes from a timestamp and a duration either way round, a duration from
            // two timestamps too, and an int or a float from either.
            ("(true + true).year() == 1", [
                "4:36: warning: Invalid type. Received one of [bool]. Expected one of [duration, timestamp].",
                "4:43: warning: Invalid type. Received one of [bool]. Expected one of [timestamp, duration].",
            ]),
            ("duration.abs(true - true) == 1", [
                "4:48: warning: Invalid type. Received one of [bool]. Expected one of [duration, timestamp].",
                "4:55: warning: Invalid type. Received one of [bool]. Expected one of [duration, timestamp].",
                "4:61: warning: The sub-expressions are not comparable, so this comparison will always return false.",
            ]),
            ("(true - duration.value(1, 's')).year() == 1", ["4:36: warning: Invalid type. Received one of [bool]. Expected one of [timestamp]."]),
            ("timestamp.date(1.5 - true, 1, 1) == 1", [
                "4:56: warning: Invalid type. Received one of [bool]. Expected one of [int, float].",
                "4:68: warning: The sub-expressions are not comparable, so this comparison will always return false.",
            ]),
            // An index is a position or a key; a slice's base is what the slice's place expects,
            // and a slice is named at its first parenthesis.
            ("resource.data[true] == 1", ["4:49: warning: Invalid type. Received one of [bool]. Expected one of [int, string]."]),
            ("{'a': 1}[true + true] == 1", [
                "4:44: warning: Invalid type. Received one of [bool]. Expected one of [int, float, string].",
                "4:51: warning: Invalid type. Received one of [bool]. Expected one of [int, float, string].",
            ]),
            ("[1] in 'a'[0:1]", ["4:42: warning: Invalid type. Received one of [string]. Expected one of [list]."]),
            ("get('a'[0:1])", ["4:39: warning: Invalid type. Received one of [string]. Expected one of [path]."]),
            ("(request.time)[0:1]", [
                "4:35: warning: Invalid type. Permission statements expect a boolean value. Received one of [string, list, path].",
            ]),
        ]
        for (condition, warnings) in cases {
            let found = Ruleset.compile(wrap("    match /a/{b} { allow read: if \(condition); }")).diagnostics.map(\.description)
            #expect(found == warnings, "\(condition)")
        }
    }

    /// A ruleset function that returns one of its parameters (through lets and through such
    /// functions) stands for that argument, which is then held to the call's place; one that
    /// computes its result is not typed there. Each case as the reference reports it.
    @Test func aFunctionReturningAParameterStandsForItsArgument() {
        let cases: [(source: String, warnings: [String])] = [
            ("""
                function f(x) { return x; }
                match /a/{b} { allow read: if f(1) && f(b); }
            """, [
                "5:37: warning: Invalid type. Received one of [int]. Expected one of [bool].",
                "5:45: warning: Invalid type. Received one of [string]. Expected one of [bool].",
                "5:45: warning: Invalid type. There is no type for variable 'b' that satisfies all clauses.",
            ]),
            ("""
                function f(x, y) { let a = y; return a; }
                function g(x) { return f(true, x); }
                match /a/{b} { allow read: if g(request.time) || g(1).size() == 1; }
            """, [
                "4:16: warning: Unused variable: x.",
                "6:56: warning: Invalid type. Received one of [int]. Expected one of [string, bytes, list, set, map].",
            ]),
            ("""
                function f(x) { return x + 1; }
                function g() { return 1; }
                match /a/{b} { allow read: if f(1) || g() || f(1) == 'a'; }
            """, []),
        ]
        for (source, warnings) in cases {
            let found = Ruleset.compile(wrap(source)).diagnostics.map(\.description)
            #expect(found == warnings, "\(source)")
        }
    }

    /// What a parameter must be is listed in the order its uses narrowed it, met in source
    /// order (the lets' values before the body): a use that needs nothing keeps an earlier
    /// use's order, and after a first such use the usual order stands, or a comparison's when
    /// that use compared it. Each list as the reference gives it for `h([1])`.
    @Test func aParametersTypesAreListedInTheOrderItsUsesNarrowedThem() {
        let asString = "[int, float, null, string, bool, path]"
        let usual = "[null, bool, int, float, string, path]"
        let cases: [(String, String)] = [
            ("function h(p) { return string(p) == 'x' && debug(p) != null; }", asString),
            ("function h(p) { return string(p) == 'x' && string(p) == 'y'; }", asString),
            ("function h(p) { return debug(p) != null && string(p) == 'x'; }", usual),
            ("function h(p) { let q = string(p) == 'x'; return debug(p) != null && q; }", asString),
            ("function h(p) { let q = debug(p) != null; return string(p) == 'x' && q; }", usual),
            // A first comparison needs nothing of its operands, but lists what follows its own way.
            ("function h(p) { return p == 1 && string(p) == 'x'; }", "[int, float, null, bool, string, path]"),
            ("function h(p) { return 'a' != p && string(p) == 'x'; }", "[int, float, null, bool, string, path]"),
            ("function h(p) { return p < 1 && p == 1 && string(p) == 'x'; }", "[string, int, float, null, bool, path]"),
            ("function h(p) { let q = p >= 'a'; return q && timestamp.value(p) == request.time; }", "[string, int]"),
            ("function h(p) { return debug(p) != null && p == 1 && string(p) == 'x'; }", usual),
            ("function h(p) { return string(p) == 'x' && p < 1; }", asString),
            // The order goes on through a let and into a call of a function that compares.
            ("function h(p) { let a = p; return string(p) == 'x' && a == 1; }", "[int, float, null, bool, string, path]"),
            ("function g(q) { return q < 1; } function h(p) { return g(p) && string(p) == 'x'; }", "[string, int, float, null, bool, path]"),
            ("function g(q) { return debug(q) != null && q == 1; } function h(p) { return g(p) && string(p) == 'x'; }", usual),
        ]
        for (function, listed) in cases {
            let source = wrap("    \(function)\n    match /a/{b} { allow read: if h([1]); }")
            let found = Ruleset.compile(source).diagnostics.map(\.description)
            #expect(found.count == 1 && found[0].hasSuffix("warning: Invalid type. Received one of [list]. Expected one of \(listed)."), "\(function): \(found)")
        }
        // Only a left operand of an ordering may be a query's constraint, listed ahead of the
        // collections then.
        for (function, listed) in [
            ("function h(p) { return p < 1 && 1 in p; }", "[constraint, list, set, map]"),
            ("function h(p) { return 1 >= p && 1 in p; }", "[list, set, map, constraint]"),
        ] {
            let found = Ruleset.compile(wrap("    \(function)\n    match /a/{b} { allow read: if h(b'x'); }")).diagnostics.map(\.description)
            #expect(found.count == 1 && found[0].hasSuffix("Expected one of \(listed)."), "\(function): \(found)")
        }
        // A conflict forgets what the uses before it needed, as a use that needed nothing would.
        let conflicted = Ruleset.compile(wrap("    function h(p) { return 1 in p && !p && string(p) == 'x'; }\n    match /a/{b} { allow read: if h([1]); }"))
        let found = conflicted.diagnostics.map(\.description)
        #expect(found.count == 2 && found[1].hasSuffix("warning: Invalid type. Received one of [list]. Expected one of \(usual)."), "\(found)")
    }

    /// A map's keys must be strings, and a path's `$(…)` something a segment can be written from.
    @Test func mapKeysAndPathSegmentsAreTyped() {
        let cases: [(String, String?)] = [
            ("{1: 2}.size() > 0", "Invalid type. Received one of [int]. Expected one of [string]."),
            ("{'a': 1, [1]: 2}.size() > 0", "Invalid type. Received one of [list]. Expected one of [string]."),
            ("{b: 1}.size() > 0", nil),
            ("exists(/databases/$({})/documents)", "Invalid type. Received one of [map]. Expected one of [path, null, int, float, string, bool]."),
            ("exists(/databases/$(request.time)/documents)", nil),
        ]
        for (condition, warning) in cases {
            let found = Ruleset.compile(wrap("    match /a/{b} { allow read: if \(condition); }")).diagnostics.map(\.message)
            #expect(found == (warning.map { [$0] } ?? []), "\(condition): \(found)")
        }
        // A parameter used as a key must be a string.
        let keyed = Ruleset.compile(wrap("    function h(p) { return {p: 1}.size() > 0; }\n    match /a/{b} { allow read: if h(1); }"))
        #expect(keyed.diagnostics.map(\.message) == ["Invalid type. Received one of [int]. Expected one of [string]."])
    }

    @Test func aValidRulesetHasNoIssuesAndAnInvalidOneNoRuleset() {
        let valid = Ruleset.compile(wrap("    match /a/{b} { allow read: if true; }"))
        #expect(valid.diagnostics.isEmpty && valid.ruleset != nil)
        // Comparisons that can hold, or whose types only the request knows, give no warning.
        let unknowable = Ruleset.compile(wrap(
            "    match /a/{b} { allow read: if 1 == 1.0 && b == 'x' && request.auth.uid == 1 && resource.data.n == b && 'x' in [b]; }"))
        #expect(unknowable.diagnostics.isEmpty, "\(unknowable.diagnostics)")
        // A warning does not stop the rules from loading.
        let warned = Ruleset.compile(wrap("    match /a/{b} { allow read: if b == 1; }"))
        #expect(warned.ruleset != nil && warned.diagnostics.map(\.severity) == [.warning])
        let invalid = Ruleset.compile(wrap("    match /a/{b} { allow read: if ; }"))
        #expect(!invalid.diagnostics.isEmpty && invalid.ruleset == nil)
        let empty = Ruleset.compile("")
        #expect(empty.ruleset == nil && empty.diagnostics.map(\.message) == ["Rules content empty. Compilation aborted."])
        #expect(empty.diagnostics.first?.isLocated == false)
    }
}

/// The names the checker knows are the standard library's: none it accepts is missing when
/// evaluated, so its "Invalid function name" warnings cannot drift from what runs.
struct KnownNamesTests {
    static let receivers: [RulesValue] = [
        .string("s"), .int(1), .float(1.5), .bytes([1]), .list([.int(1)]), .set([.int(1)]), .map(["a": .int(1)]), .mapDiff(MapDiff(new: [:], old: [:])),
        .path(RulesPath(["a", "b"])), .timestamp(RulesTimestamp(seconds: 0, nanos: 0)), .duration(RulesDuration(nanos: 1)!), .latlng(1, 2),
    ]

    @Test func everyKnownFunctionAndMethodIsImplemented() {
        let notFound = { (v: RulesValue) in if case .error(let m) = v { m.hasPrefix("Function not found") } else { false } }
        for name in Checker.globalFunctions where !["get", "exists", "getAfter", "existsAfter", "debug"].contains(name) {
            #expect(!notFound(Stdlib.function(name, [])), "\(name)")
        }
        for name in Checker.methods {
            #expect(Self.receivers.contains { !notFound(Stdlib.method($0, name, [])) }, "\(name)")
        }
        #expect(notFound(Stdlib.function("math.isInfinite", [])))
    }
}
