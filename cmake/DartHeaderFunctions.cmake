# dart_header_functions(header out_var): the names of the functions that a
# public header declares for linking (static inline helpers and macros left
# out), in the order of declaration. A text scan, so that it also runs in
# script mode: comments and preprocessor lines are dropped, then every name
# dart_* followed by a parameter list, optional specifiers and attributes,
# and a ';' is a declaration.
function(dart_header_functions header out_var)
  file(READ "${header}" text)
  string(REGEX REPLACE "/\\*([^*]|\\*+[^*/])*\\*+/" " " text "${text}")
  string(REGEX REPLACE "//[^\n]*" " " text "${text}")
  # ';' separates CMake list items: keep it out of the matches
  string(REPLACE ";" "@" text "${text}")
  string(REGEX REPLACE "\n[ \t]*#([^\\\n]|\\\\[^\n]|\\\\\n)*" "\n" text
         "\n${text}")
  # definitions of static inline helpers (bodies without nested braces)
  string(REGEX REPLACE "static[ \t\n]+inline[^@{]*{[^}]*}" " " text
         "${text}")
  # name, parameters (one level of nested parentheses), then up to the ';'
  # specifiers and at most one attribute: __attribute__((...))
  string(CONCAT decl_re
         "[^A-Za-z0-9_]dart_[a-z0-9_]+[ \t\n]*"
         "\\(([^()]|\\([^()]*\\))*\\)"
         "[^@{}()]*(\\([^@{}]*\\))?[^@{}()]*@")
  string(REGEX MATCHALL "${decl_re}" decls "${text}")
  set(names "")
  foreach(decl IN LISTS decls)
    string(REGEX MATCH "dart_[a-z0-9_]+" name "${decl}")
    list(APPEND names ${name})
  endforeach()
  set(${out_var} ${names} PARENT_SCOPE)
endfunction()
