import FuzzSupport
import RulesFuzzing

// One condition inside fixed rules, so nearly every input loads and is evaluated: the
// standard library, operators and the evaluator, more than the grammar.
fuzz { bytes in
    let condition = String(decoding: bytes, as: UTF8.self)
    compileAndDecide("""
        rules_version = '2';
        service cloud.firestore {
          match /databases/{database}/documents {
            function helper(a, b) { let c = a; return [c, b]; }
            match /{collection}/{id}/{rest=**} {
              allow read, write: if \(condition);
            }
          }
        }
        """)
}
