# Run at install time (install(CODE) in the top CMakeLists.txt): writes remotecall.pc for the
# prefix actually installed to -- cmake --install --prefix DIR included -- and installs it
# (file(INSTALL) adds $DESTDIR). Each folder is ${prefix}/DIR, or DIR itself when the build
# was configured with an absolute one, so pkg-config prints clean paths, never "../..".
# In: RC_PC_IN, RC_PC_OUT, RC_PC_{LIBDIR,INCLUDEDIR,BINDIR} (GNUInstallDirs' values),
# RC_PC_LIBS, RC_PC_LIBS_PRIVATE, RC_PC_VERSION; CMAKE_INSTALL_PREFIX.
string(REGEX REPLACE "(.)/+$" "\\1" RC_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
foreach(d LIBDIR INCLUDEDIR BINDIR)
  if(IS_ABSOLUTE "${RC_PC_${d}}")
    set(RC_PC_FULL_${d} "${RC_PC_${d}}")
  else()
    set(RC_PC_FULL_${d} "\${prefix}/${RC_PC_${d}}")
  endif()
endforeach()
configure_file("${RC_PC_IN}" "${RC_PC_OUT}" @ONLY)
if(IS_ABSOLUTE "${RC_PC_LIBDIR}")
  set(rc_pc_dest "${RC_PC_LIBDIR}/pkgconfig")
else()
  set(rc_pc_dest "${CMAKE_INSTALL_PREFIX}/${RC_PC_LIBDIR}/pkgconfig")
endif()
file(INSTALL DESTINATION "${rc_pc_dest}" TYPE FILE FILES "${RC_PC_OUT}")
